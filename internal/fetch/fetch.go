// Package fetch fetches feeds over HTTP(S), webcal and file URLs: conditional
// requests with the validators of the last complete run, a size cap, gzip,
// and failures sorted into kinds that say whether to try again (with the
// server's Retry-After). It knows HTTP, not iCalendar: whether a body is a
// calendar is the question its Fetcher's Accept function answers.
package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/retryafter"
)

// DefaultMaxSize caps a feed body when the Fetcher names no cap.
const DefaultMaxSize = 20 << 20

// Version is stamped into the User-Agent; cmd/calsyncd sets it at start-up.
var Version = "dev"

// Request describes one fetch of a feed.
type Request struct {
	URL       string
	Headers   map[string]string
	BasicAuth *BasicAuth
	// Validators from the last complete run; the server may answer 304.
	ETag         string
	LastModified string
}

// BasicAuth are HTTP basic credentials.
type BasicAuth struct {
	Username string
	Password string
}

// Response is a fetched feed.
type Response struct {
	NotModified bool
	// Body is the whole body (Fetch); Stream is the body as it arrives
	// (Open).
	Body         []byte
	Stream       *Stream
	ETag         string
	LastModified string
	// BodyHash identifies the body, for servers that send no validators
	// (Fetch; from Open, Stream.Finish gives it).
	BodyHash string
	// Charset is the charset the server declared for the body (its
	// Content-Type's), "" when none (always for file://): for
	// feed.Options.Charset.
	Charset string
}

// ErrorKind classifies a failed fetch.
type ErrorKind string

// Kinds of fetch failure.
const (
	// Unreachable: DNS, connection, TLS or timeout trouble.
	Unreachable ErrorKind = "unreachable"
	// Rejected: the server refused (401, 403, 404, 410, other 4xx).
	Rejected ErrorKind = "rejected"
	// Unavailable: 429 or 5xx; try again later (RetryAfter when given).
	Unavailable ErrorKind = "unavailable"
	// TooLarge: the body exceeded the size cap.
	TooLarge ErrorKind = "too_large"
	// Invalid: the body is not a calendar (HTML, empty, truncated).
	Invalid ErrorKind = "invalid"
)

// Error is a failed fetch. Its message never contains the feed URL,
// which may carry a secret token.
type Error struct {
	Kind       ErrorKind
	StatusCode int
	RetryAfter time.Duration
	Msg        string
	Err        error
	// Path is the file of a file:// feed, named in the message (a local
	// path, not a server's secret).
	Path string
}

func (e *Error) Error() string {
	prefix := "feed: "
	if e.Path != "" {
		prefix += e.Path + ": "
	}
	switch {
	case e.Msg == "" && e.Err != nil:
		return prefix + e.Err.Error()
	case e.Err != nil:
		return prefix + e.Msg + ": " + e.Err.Error()
	}
	return prefix + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorClass implements calsyncd.Classed: feed_ and the kind.
func (e *Error) ErrorClass() calsyncd.ErrorClass {
	return calsyncd.ErrorClass("feed_" + string(e.Kind))
}

// Fetcher fetches feeds over http(s), webcal (as https) and file URLs.
type Fetcher struct {
	Client  *http.Client
	MaxSize int64
	// Accept, when set, refuses a body that is not what the caller can use
	// (feed.CheckBody refuses one that is not a whole calendar); the fetch
	// then fails with an Error of kind Invalid wrapping its error, and the
	// caller never stores the validators of a login page.
	Accept func(body []byte) error
	// Timeout bounds reading a file:// feed, as Client.Timeout bounds an
	// HTTP fetch (0: only the context does).
	Timeout time.Duration
}

// NewFetcher returns a Fetcher with explicit timeouts, a size cap and the
// check a body must pass (nil: none).
func NewFetcher(connectTimeout, timeout time.Duration, maxSize int64, accept func(body []byte) error) *Fetcher {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   connectTimeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
	}
	return &Fetcher{
		Client: &http.Client{
			Transport:     tr,
			Timeout:       timeout,
			CheckRedirect: checkRedirect,
		},
		MaxSize: maxSize,
		Accept:  accept,
		Timeout: timeout,
	}
}

// Fetch retrieves a feed, its whole body in memory. A 304 answer is a
// Response with NotModified set, not an error.
func (f *Fetcher) Fetch(ctx context.Context, req Request) (*Response, error) {
	resp, err := f.open(ctx, req)
	if err != nil || resp.Stream == nil {
		return resp, err
	}
	defer resp.Stream.Close()
	body, err := io.ReadAll(resp.Stream)
	if err != nil {
		return nil, err // the Stream's *Error
	}
	if err := f.accept(body); err != nil {
		return nil, err
	}
	resp.Body, resp.Stream, resp.BodyHash = body, nil, hashBody(body)
	return resp, nil
}

// open sends the request: a 200 answer's body is a Stream (a file's is
// read whole, into Body).
func (f *Fetcher) open(ctx context.Context, req Request) (*Response, error) {
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, &Error{Kind: Rejected, Msg: "invalid feed URL"}
	}
	switch strings.ToLower(u.Scheme) {
	case "file":
		return f.fetchFile(ctx, u.Path)
	case "webcal":
		u.Scheme = "https"
	case "webcals":
		u.Scheme = "https"
	case "http", "https":
	default:
		return nil, &Error{Kind: Rejected, Msg: fmt.Sprintf("unsupported URL scheme %q", u.Scheme)}
	}
	hreq, err := newRequest(ctx, u, req)
	if err != nil {
		return nil, err
	}
	resp, err := f.client().Do(hreq)
	if err != nil {
		var down *downgradeError
		if errors.As(err, &down) {
			return nil, &Error{Kind: Rejected, Msg: down.Error()}
		}
		msg := "cannot reach the feed server"
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			msg = "the feed server did not answer in time"
		}
		return nil, &Error{Kind: Unreachable, Msg: msg, Err: NewScrubber(req).scrubErr(stripURL(err))}
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return answer(resp, req)
	}
	body, err := f.stream(resp)
	if err != nil {
		return nil, err
	}
	return &Response{Stream: body, ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"),
		Charset: charsetOf(serverText(resp.Header.Get("Content-Type")))}, nil
}

// maxCharset is the longest charset label kept: IANA's longest names are
// under 45 characters.
const maxCharset = 45

// charsetOf is the charset parameter of a Content-Type ("" when none,
// unreadable, or no label at all): the feed parser decodes the body from
// it, and names a label it does not know in a warning, so only what has
// the shape of a label (letters, digits, "-_.:+()") goes on.
func charsetOf(contentType ServerText) string {
	if contentType.raw == "" {
		return ""
	}
	_, params, err := mime.ParseMediaType(contentType.raw)
	if err != nil {
		return ""
	}
	cs := params["charset"]
	if len(cs) > maxCharset || strings.IndexFunc(cs, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:+()", r))
	}) >= 0 {
		return ""
	}
	return cs
}

// newRequest is the GET of a feed: who we are, what we accept, the
// subscription's headers and credentials, and the validators.
func newRequest(ctx context.Context, u *url.URL, req Request) (*http.Request, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &Error{Kind: Rejected, Msg: "invalid feed URL"}
	}
	setOwnHeaders(hreq.Header)
	for k, v := range req.Headers {
		hreq.Header.Set(k, v)
	}
	if req.BasicAuth != nil {
		hreq.SetBasicAuth(req.BasicAuth.Username, req.BasicAuth.Password)
	}
	if req.ETag != "" {
		hreq.Header.Set("If-None-Match", req.ETag)
	}
	if req.LastModified != "" {
		hreq.Header.Set("If-Modified-Since", req.LastModified)
	}
	return hreq, nil
}

// answer sorts an answer other than 200: not modified, or a failure of its
// kind.
func answer(resp *http.Response, req Request) (*Response, error) {
	code := resp.StatusCode
	var reached *url.URL
	if resp.Request != nil {
		reached = resp.Request.URL
	}
	status := statusText(resp, NewScrubber(req, reached))
	switch {
	case code == http.StatusNotModified:
		return &Response{NotModified: true, ETag: req.ETag, LastModified: req.LastModified}, nil
	case code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500:
		return nil, &Error{Kind: Unavailable, StatusCode: code, RetryAfter: retryafter.Parse(resp.Header.Get("Retry-After"), resp.Header.Get("Date"), time.Now()),
			Msg: fmt.Sprintf("the feed server answered %s; will try again later", status)}
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return nil, &Error{Kind: Rejected, StatusCode: code,
			Msg: fmt.Sprintf("the feed server refused access (%s) — check basic_auth, headers or the token in the URL", status)}
	case code == http.StatusNotFound || code == http.StatusGone:
		return nil, &Error{Kind: Rejected, StatusCode: code,
			Msg: fmt.Sprintf("the feed is not there (%s) — check the URL", status)}
	case code >= 400:
		return nil, &Error{Kind: Rejected, StatusCode: code, Msg: fmt.Sprintf("the feed server answered %s", status)}
	default:
		return nil, &Error{Kind: Rejected, StatusCode: code, Msg: fmt.Sprintf("unexpected answer %s", status)}
	}
}

// statusText is the answer's status line as an error may show it: the
// reason phrase is the server's free text, so it goes out only through
// the request's Scrubber.
func statusText(resp *http.Response, sc Scrubber) string {
	reason := sc.Clean(serverText(strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))))
	if reason == "" {
		return strconv.Itoa(resp.StatusCode)
	}
	return strconv.Itoa(resp.StatusCode) + " " + reason
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func tooLarge(limit int64) *Error {
	return &Error{Kind: TooLarge, Msg: fmt.Sprintf("the feed is larger than the %d-byte limit (feed.max_size)", limit)}
}

// accept runs the Fetcher's check on a body.
func (f *Fetcher) accept(body []byte) error {
	if f.Accept == nil {
		return nil
	}
	if err := f.Accept(body); err != nil {
		return &Error{Kind: Invalid, Err: err}
	}
	return nil
}

func (f *Fetcher) limit() int64 {
	if f.MaxSize <= 0 {
		return DefaultMaxSize
	}
	return f.MaxSize
}

// readCapped reads at most limit bytes, and fails with TooLarge past it
// without reading further.
func readCapped(r io.Reader, limit int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, &Error{Kind: Unreachable, Msg: "the feed download broke off", Err: stripURL(err)}
	}
	if int64(len(body)) > limit {
		return nil, tooLarge(limit)
	}
	return body, nil
}

func hashBody(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// stripURL drops the request URL from net/http's errors (it may carry a
// token) and keeps the cause.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
