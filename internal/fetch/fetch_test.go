package fetch_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
)

const smallCalendar = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART:20270101T100000Z\r\nSUMMARY:A\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

func fetchErr(t *testing.T, err error) *fetch.Error {
	t.Helper()
	var fe *fetch.Error
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a *fetch.Error", err)
	}
	return fe
}

func TestFetchSendsWhatTheServerNeeds(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(context.Background())
		w.Header().Set("ETag", `"v2"`)
		w.Header().Set("Last-Modified", "Wed, 01 Jan 2027 10:00:00 GMT")
		fmt.Fprint(w, smallCalendar)
	}))
	defer srv.Close()
	fetch.Version = "1.2.3"
	f := fetch.NewFetcher(time.Second, 5*time.Second, 1<<20, feed.CheckBody)
	resp, err := f.Fetch(context.Background(), fetch.Request{
		URL:       srv.URL + "/cal.ics?token=secret",
		Headers:   map[string]string{"X-Api-Key": "k"},
		BasicAuth: &fetch.BasicAuth{Username: "u", Password: "p"},
		ETag:      `"v1"`, LastModified: "Tue, 31 Dec 2026 10:00:00 GMT",
	})
	if err != nil {
		t.Fatal(err)
	}
	if ua := got.Header.Get("User-Agent"); ua != "calsyncd/1.2.3" {
		t.Errorf("User-Agent = %q", ua)
	}
	if u, p, ok := got.BasicAuth(); !ok || u != "u" || p != "p" {
		t.Errorf("basic auth = %q %q %v", u, p, ok)
	}
	if got.Header.Get("X-Api-Key") != "k" || got.Header.Get("If-None-Match") != `"v1"` ||
		got.Header.Get("If-Modified-Since") != "Tue, 31 Dec 2026 10:00:00 GMT" {
		t.Errorf("headers = %v", got.Header)
	}
	if string(resp.Body) != smallCalendar || resp.ETag != `"v2"` || resp.LastModified != "Wed, 01 Jan 2027 10:00:00 GMT" || resp.BodyHash == "" {
		t.Errorf("response = %+v", resp)
	}
}

func TestFetchClassifiesAnswers(t *testing.T) {
	tests := map[string]struct {
		status     int
		header     map[string]string
		body       string
		kind       fetch.ErrorKind
		retryAfter time.Duration
		says       string
	}{
		"unauthorised":       {status: 401, kind: fetch.Rejected, says: "refused access"},
		"forbidden":          {status: 403, kind: fetch.Rejected, says: "refused access"},
		"not found":          {status: 404, kind: fetch.Rejected, says: "check the URL"},
		"gone":               {status: 410, kind: fetch.Rejected, says: "check the URL"},
		"teapot":             {status: 418, kind: fetch.Rejected, says: "418"},
		"rate limited":       {status: 429, header: map[string]string{"Retry-After": "120"}, kind: fetch.Unavailable, retryAfter: 2 * time.Minute},
		"unavailable":        {status: 503, header: map[string]string{"Retry-After": "30"}, kind: fetch.Unavailable, retryAfter: 30 * time.Second},
		"server error":       {status: 500, kind: fetch.Unavailable},
		"bad gateway":        {status: 502, kind: fetch.Unavailable},
		"html login page":    {status: 200, body: "<!DOCTYPE html><html><head><title>Sign in</title></head></html>", kind: fetch.Invalid, says: "HTML page — a login page?"},
		"json":               {status: 200, body: `{"error":"nope"}`, kind: fetch.Invalid, says: "BEGIN:VCALENDAR"},
		"empty":              {status: 200, body: "", kind: fetch.Invalid, says: "empty"},
		"no content is odd":  {status: 204, kind: fetch.Rejected},
		"partial is refused": {status: 206, body: smallCalendar, kind: fetch.Rejected},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			_, err := fetch.NewFetcher(time.Second, 5*time.Second, 1<<20, feed.CheckBody).Fetch(context.Background(), fetch.Request{URL: srv.URL + "/secret-token"})
			fe := fetchErr(t, err)
			if fe.Kind != tt.kind || fe.RetryAfter != tt.retryAfter {
				t.Errorf("got kind %s retry-after %v, want %s %v", fe.Kind, fe.RetryAfter, tt.kind, tt.retryAfter)
			}
			if tt.status >= 400 && fe.StatusCode != tt.status {
				t.Errorf("status %d, want %d", fe.StatusCode, tt.status)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
			if strings.Contains(err.Error(), "secret-token") || strings.Contains(err.Error(), srv.URL) {
				t.Errorf("error leaks the URL: %v", err)
			}
			if tt.kind == fetch.Invalid && !errors.Is(err, feed.ErrNotCalendar) {
				t.Errorf("invalid body error does not wrap ErrNotCalendar: %v", err)
			}
		})
	}
}

func TestFetchNotModified(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprint(w, smallCalendar)
	}))
	defer srv.Close()
	resp, err := fetch.NewFetcher(time.Second, 5*time.Second, 0, feed.CheckBody).Fetch(context.Background(), fetch.Request{URL: srv.URL, ETag: `"v1"`})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.NotModified || resp.ETag != `"v1"` || resp.Body != nil {
		t.Errorf("304 gave %+v", resp)
	}
}

func TestFetchGzip(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(smallCalendar))
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(zipped.Bytes())
	}))
	defer srv.Close()
	for name, headers := range map[string]map[string]string{
		// Go's transport asks for gzip and undoes it.
		"transport's own": nil,
		// A configured Accept-Encoding turns that off: we undo it.
		"configured Accept-Encoding": {"Accept-Encoding": "gzip"},
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := fetch.NewFetcher(time.Second, 5*time.Second, 1<<20, feed.CheckBody).Fetch(context.Background(), fetch.Request{URL: srv.URL, Headers: headers})
			if err != nil {
				t.Fatal(err)
			}
			if string(resp.Body) != smallCalendar {
				t.Errorf("body = %q", resp.Body)
			}
		})
	}
}

func TestFetchCapsTheSizeWhileReading(t *testing.T) {
	big := "BEGIN:VCALENDAR\r\n" + strings.Repeat("X-PAD:"+strings.Repeat("x", 100)+"\r\n", 200) + "END:VCALENDAR\r\n"
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(big))
	zw.Close()
	for name, h := range map[string]http.HandlerFunc{
		"declared length": func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, big) },
		"chunked": func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i < len(big); i += 1000 {
				w.Write([]byte(big[i:min(i+1000, len(big))]))
				w.(http.Flusher).Flush()
			}
		},
		// A small gzip body that inflates past the cap (a zip bomb).
		"gzip bomb": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(zipped.Bytes())
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			_, err := fetch.NewFetcher(time.Second, 5*time.Second, 4096, feed.CheckBody).Fetch(context.Background(), fetch.Request{URL: srv.URL})
			if fe := fetchErr(t, err); fe.Kind != fetch.TooLarge {
				t.Errorf("kind %s, want too_large", fe.Kind)
			}
		})
	}
}

func TestFetchFollowsAtMostFiveRedirects(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path, "/r%d", &n)
		limit := 5
		if r.URL.Query().Get("many") != "" {
			limit = 6
		}
		if n < limit {
			http.Redirect(w, r, fmt.Sprintf("%s/r%d?%s", srv.URL, n+1, r.URL.RawQuery), http.StatusFound)
			return
		}
		fmt.Fprint(w, smallCalendar)
	}))
	defer srv.Close()
	f := fetch.NewFetcher(time.Second, 5*time.Second, 1<<20, feed.CheckBody)
	if _, err := f.Fetch(context.Background(), fetch.Request{URL: srv.URL + "/r0"}); err != nil {
		t.Errorf("5 redirects: %v", err)
	}
	_, err := f.Fetch(context.Background(), fetch.Request{URL: srv.URL + "/r0?many=1"})
	if fe := fetchErr(t, err); !strings.Contains(err.Error(), "5 redirects") || fe.Kind != fetch.Unreachable {
		t.Errorf("6 redirects: %v", err)
	}
}

func TestFetchSchemes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cal.ics")
	if err := os.WriteFile(path, []byte(smallCalendar), 0o600); err != nil {
		t.Fatal(err)
	}
	f := fetch.NewFetcher(time.Second, 5*time.Second, 1<<20, feed.CheckBody)
	resp, err := f.Fetch(context.Background(), fetch.Request{URL: "file://" + path})
	if err != nil || string(resp.Body) != smallCalendar {
		t.Fatalf("file: %v", err)
	}
	_, err = f.Fetch(context.Background(), fetch.Request{URL: "file://" + filepath.Join(dir, "missing.ics")})
	fetchErr(t, err)
	_, err = f.Fetch(context.Background(), fetch.Request{URL: "gopher://example.com/cal"})
	if fe := fetchErr(t, err); fe.Kind != fetch.Rejected {
		t.Errorf("gopher: %v", err)
	}

	// webcal:// is https://: a transport that records the scheme shows it.
	var scheme string
	f.Client.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		scheme = r.URL.Scheme
		return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: nopBody(smallCalendar), Request: r}, nil
	})
	if _, err := f.Fetch(context.Background(), fetch.Request{URL: "webcal://example.com/cal.ics"}); err != nil || scheme != "https" {
		t.Errorf("webcal fetched over %q: %v", scheme, err)
	}
}

// TestFetchTimesOut runs in a synctest bubble with an in-memory transport
// that never answers: the total timeout fires in fake time.
func TestFetchTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fetch.NewFetcher(time.Second, 30*time.Second, 1<<20, feed.CheckBody)
		f.Client.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		})
		start := time.Now()
		_, err := f.Fetch(context.Background(), fetch.Request{URL: "https://example.com/slow.ics"})
		fe := fetchErr(t, err)
		if fe.Kind != fetch.Unreachable || !strings.Contains(err.Error(), "in time") {
			t.Errorf("timeout gave %v", err)
		}
		if waited := time.Since(start); waited != 30*time.Second {
			t.Errorf("gave up after %v, want the 30s total timeout", waited)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type stringBody struct{ *strings.Reader }

func (stringBody) Close() error { return nil }

func nopBody(s string) stringBody { return stringBody{strings.NewReader(s)} }

func TestFetchPassesTheDeclaredCharsetOn(t *testing.T) {
	// "Caf\xc3\xa9" is valid UTF-8 ("Café"), but the server says Latin-1:
	// it means "CafÃ©", and only the declared charset can tell.
	body := strings.Replace(smallCalendar, "SUMMARY:A", "SUMMARY:Caf\xc3\xa9 \xabM\xe1laga\xbb", 1)
	for name, tt := range map[string]struct {
		contentType, charset, summary string
	}{
		"latin-1 declared": {"text/calendar; charset=ISO-8859-1", "ISO-8859-1", "CafÃ© «Málaga»"},
		"quoted label":     {`text/calendar; charset="windows-1252"`, "windows-1252", "CafÃ© «Málaga»"},
		"none: UTF-8 where it is, Windows-1252 where it is not": {"text/calendar", "", "Caf\xc3\xa9 «Málaga»"},
		"unreadable header": {"text/calendar; charset", "", "Caf\xc3\xa9 «Málaga»"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.Write([]byte(body))
			}))
			defer srv.Close()
			f := fetch.NewFetcher(time.Second, 5*time.Second, 1<<20, feed.CheckBody)
			resp, err := f.Fetch(context.Background(), fetch.Request{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Charset != tt.charset {
				t.Errorf("charset = %q, want %q", resp.Charset, tt.charset)
			}
			cal, err := feed.ParseBytes(resp.Body, feed.Options{Charset: resp.Charset})
			if err != nil {
				t.Fatal(err)
			}
			if got := cal.Events[0].Summary; got != tt.summary {
				t.Errorf("summary = %q, want %q", got, tt.summary)
			}
			// The stream reads the same.
			sresp, err := f.Open(context.Background(), fetch.Request{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			defer sresp.Stream.Close()
			scal, err := feed.Parse(sresp.Stream, feed.Options{Charset: sresp.Charset})
			if err != nil {
				t.Fatal(err)
			}
			if got := scal.Events[0].Summary; got != tt.summary {
				t.Errorf("streamed summary = %q, want %q", got, tt.summary)
			}
		})
	}
}
