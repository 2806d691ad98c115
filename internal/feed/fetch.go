package feed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

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
	NotModified  bool
	Body         []byte
	ETag         string
	LastModified string
	// BodyHash identifies the body, for servers that send no validators.
	BodyHash string
}

// FetchErrorKind classifies a failed fetch.
type FetchErrorKind string

// Kinds of fetch failure.
const (
	// Unreachable: DNS, connection, TLS or timeout trouble.
	Unreachable FetchErrorKind = "unreachable"
	// Rejected: the server refused (401, 403, 404, 410, other 4xx).
	Rejected FetchErrorKind = "rejected"
	// Unavailable: 429 or 5xx; try again later (RetryAfter when given).
	Unavailable FetchErrorKind = "unavailable"
	// TooLarge: the body exceeded the size cap.
	TooLarge FetchErrorKind = "too_large"
	// Invalid: the body is not a calendar (HTML, empty, truncated).
	Invalid FetchErrorKind = "invalid"
)

// FetchError is a failed fetch. Its message never contains the feed URL,
// which may carry a secret token.
type FetchError struct {
	Kind       FetchErrorKind
	StatusCode int
	RetryAfter time.Duration
	Msg        string
	Err        error
}

func (e *FetchError) Error() string {
	if e.Err != nil {
		return "feed: " + e.Msg + ": " + e.Err.Error()
	}
	return "feed: " + e.Msg
}

func (e *FetchError) Unwrap() error { return e.Err }

// Transient reports whether a later fetch may well succeed.
func (e *FetchError) Transient() bool { return e.Kind == Unreachable || e.Kind == Unavailable }

// Fetcher fetches feeds over http(s), webcal (as https) and file URLs.
type Fetcher struct {
	Client  *http.Client
	MaxSize int64
}

// NewFetcher returns a Fetcher with explicit timeouts and a size cap.
func NewFetcher(connectTimeout, timeout time.Duration, maxSize int64) *Fetcher {
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
			Transport: tr,
			Timeout:   timeout,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) >= 5 {
					return errors.New("more than 5 redirects")
				}
				return nil
			},
		},
		MaxSize: maxSize,
	}
}

// Fetch retrieves a feed. A 304 answer is a Response with NotModified set,
// not an error.
func (f *Fetcher) Fetch(ctx context.Context, req Request) (*Response, error) {
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, &FetchError{Kind: Rejected, Msg: "invalid feed URL"}
	}
	switch strings.ToLower(u.Scheme) {
	case "file":
		return f.fetchFile(u.Path)
	case "webcal":
		u.Scheme = "https"
	case "webcals":
		u.Scheme = "https"
	case "http", "https":
	default:
		return nil, &FetchError{Kind: Rejected, Msg: fmt.Sprintf("unsupported URL scheme %q", u.Scheme)}
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &FetchError{Kind: Rejected, Msg: "invalid feed URL"}
	}
	hreq.Header.Set("User-Agent", "calsyncd/"+Version)
	hreq.Header.Set("Accept", "text/calendar, */*;q=0.5")
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
	resp, err := f.Client.Do(hreq)
	if err != nil {
		return nil, &FetchError{Kind: Unreachable, Msg: "cannot reach the feed server", Err: stripURL(err)}
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified:
		return &Response{NotModified: true, ETag: req.ETag, LastModified: req.LastModified}, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return nil, &FetchError{Kind: Unavailable, StatusCode: resp.StatusCode, RetryAfter: ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
			Msg: fmt.Sprintf("the feed server answered %s", resp.Status)}
	case resp.StatusCode >= 400:
		return nil, &FetchError{Kind: Rejected, StatusCode: resp.StatusCode, Msg: fmt.Sprintf("the feed server answered %s", resp.Status)}
	case resp.StatusCode != http.StatusOK:
		return nil, &FetchError{Kind: Rejected, StatusCode: resp.StatusCode, Msg: fmt.Sprintf("unexpected answer %s", resp.Status)}
	}
	body, err := f.readCapped(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Body: body, ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"), BodyHash: hashBody(body)}, nil
}

func (f *Fetcher) fetchFile(path string) (*Response, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, &FetchError{Kind: Unreachable, Msg: "cannot open the feed file", Err: errors.Unwrap(err)}
	}
	defer fh.Close()
	body, err := f.readCapped(fh)
	if err != nil {
		return nil, err
	}
	return &Response{Body: body, BodyHash: hashBody(body)}, nil
}

func (f *Fetcher) readCapped(r io.Reader) ([]byte, error) {
	limit := f.MaxSize
	if limit <= 0 {
		limit = 20 << 20
	}
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, &FetchError{Kind: Unreachable, Msg: "the feed download broke off", Err: stripURL(err)}
	}
	if int64(len(body)) > limit {
		return nil, &FetchError{Kind: TooLarge, Msg: fmt.Sprintf("the feed is larger than the %d-byte limit (feed.max_size)", limit)}
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

// ParseRetryAfter reads a Retry-After header in seconds or as an HTTP date.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
