package gcalfake

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// Client returns an HTTP client that serves every request in memory,
// authenticated as user (the bearer token the emulator charges quotas to).
// Use it with option.WithHTTPClient and option.WithEndpoint(Endpoint):
// there is no socket, so a testing/synctest bubble sees every wait.
func (s *Server) Client(user string) *http.Client {
	return &http.Client{Transport: s.Transport(user)}
}

// Endpoint is the API base URL to use with Client.
const Endpoint = "http://gcalfake.invalid" + BasePath

// Transport returns the round tripper of Client.
func (s *Server) Transport(user string) http.RoundTripper {
	return &memTransport{s: s, user: user}
}

type memTransport struct {
	s    *Server
	user string
}

// ErrConnectionLost is wrapped in the error a request gets when the
// emulator drops its answer (a lost response).
var ErrConnectionLost = fmt.Errorf("gcalfake: connection closed before the response: %w", io.ErrUnexpectedEOF)

func (t *memTransport) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	} else {
		r.Body = http.NoBody
	}
	if t.user != "" {
		r.Header.Set("Authorization", "Bearer "+t.user)
	}
	r.RequestURI = r.URL.RequestURI()
	rw := &memResponse{header: http.Header{}}
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			resp, err = nil, ErrConnectionLost
		}
	}()
	t.s.ServeHTTP(rw, r)
	if rw.code == 0 {
		rw.code = http.StatusOK
	}
	if rw.header.Get("Date") == "" {
		rw.header.Set("Date", t.s.now().UTC().Format(http.TimeFormat))
	}
	return &http.Response{
		Status:        strconv.Itoa(rw.code) + " " + http.StatusText(rw.code),
		StatusCode:    rw.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rw.header,
		Body:          io.NopCloser(bytes.NewReader(rw.body.Bytes())),
		ContentLength: int64(rw.body.Len()),
		Request:       req,
	}, nil
}

// memResponse is a ResponseWriter that keeps the answer in memory.
type memResponse struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (m *memResponse) Header() http.Header { return m.header }

func (m *memResponse) WriteHeader(code int) {
	if m.code == 0 {
		m.code = code
	}
}

func (m *memResponse) Write(b []byte) (int, error) {
	if m.code == 0 {
		m.code = http.StatusOK
	}
	return m.body.Write(b)
}
