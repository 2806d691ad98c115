package fetch_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
)

// seen is one request a recording server received.
type seen struct {
	Host, Path string
	Header     http.Header
}

// recorder is a feed server that records every request and answers by
// path: a redirect to routes[path], or the calendar.
type recorder struct {
	mu     sync.Mutex
	got    []seen
	routes map[string]string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.mu.Lock()
	rec.got = append(rec.got, seen{Host: r.Host, Path: r.URL.Path, Header: r.Header.Clone()})
	to, ok := rec.routes[r.URL.Path]
	rec.mu.Unlock()
	if ok {
		http.Redirect(w, r, to, http.StatusFound)
		return
	}
	fmt.Fprint(w, smallCalendar)
}

func (rec *recorder) requests() []seen {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]seen(nil), rec.got...)
}

// loopbackFetcher resolves every host name to 127.0.0.1 (keeping the
// port), so one local server can play several hosts: the Host header
// tells them apart.
func loopbackFetcher(t *testing.T, roots *x509.CertPool) *fetch.Fetcher {
	t.Helper()
	f := fetch.NewFetcher(time.Second, 5*time.Second, 1<<20, feed.CheckBody)
	dialer := &net.Dialer{Timeout: time.Second}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		return dialer.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
	}}
	if roots != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: roots}
	}
	t.Cleanup(tr.CloseIdleConnections)
	f.Client.Transport = tr
	return f
}

func port(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	_, p, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// secretRequest is a feed with every kind of secret calsyncd sends.
func secretRequest(url string) fetch.Request {
	return fetch.Request{
		URL:       url,
		Headers:   map[string]string{"X-Feed-Token": "hdr-secret", "Cookie": "session=cookie-secret"},
		BasicAuth: &fetch.BasicAuth{Username: "u", Password: "basic-secret"},
		ETag:      `"v1"`,
	}
}

// leaks lists the secrets a request carried.
func leaks(s seen) []string {
	var out []string
	for _, h := range []string{"X-Feed-Token", "Cookie", "Authorization", "Referer"} {
		if v := s.Header.Get(h); v != "" {
			out = append(out, h+": "+v)
		}
	}
	return out
}

func TestRedirectsKeepSecretsOnTheFeedsHost(t *testing.T) {
	rec := &recorder{routes: map[string]string{}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	p := port(t, srv)
	rec.routes["/private/tok-123/feed.ics"] = "/moved/feed.ics?token=tok-123"
	f := loopbackFetcher(t, nil)
	if _, err := f.Fetch(context.Background(), secretRequest("http://feeds.test:"+p+"/private/tok-123/feed.ics")); err != nil {
		t.Fatal(err)
	}
	got := rec.requests()
	if len(got) != 2 {
		t.Fatalf("got %d requests, want 2", len(got))
	}
	final := got[1]
	if final.Header.Get("X-Feed-Token") != "hdr-secret" || final.Header.Get("Cookie") != "session=cookie-secret" {
		t.Errorf("same-host redirect dropped the configured headers: %v", final.Header)
	}
	if !strings.HasPrefix(final.Header.Get("Authorization"), "Basic ") {
		t.Errorf("same-host redirect dropped basic auth: %v", final.Header)
	}
	if ref := final.Header.Get("Referer"); ref != "" {
		t.Errorf("sent Referer %q: the feed URL with its token", ref)
	}
	if final.Header.Get("If-None-Match") != `"v1"` {
		t.Errorf("validators lost on redirect: %v", final.Header)
	}
}

func TestRedirectsOffTheFeedsHostCarryNoSecret(t *testing.T) {
	rec := &recorder{routes: map[string]string{}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	other := &recorder{routes: map[string]string{}}
	otherSrv := httptest.NewServer(other)
	defer otherSrv.Close()
	p, op := port(t, srv), port(t, otherSrv)

	tests := map[string]struct {
		route      map[string]string // on feeds.test:p
		otherRoute map[string]string
		// the requests that must carry no secret, by Host
		clean []string
	}{
		"another host": {
			route: map[string]string{"/a/feed.ics": "http://cdn.test:" + p + "/b/feed.ics"},
			clean: []string{"cdn.test:" + p},
		},
		"another port of the same host": {
			route: map[string]string{"/a/feed.ics": "http://feeds.test:" + op + "/b/feed.ics"},
			clean: []string{"feeds.test:" + op},
		},
		"a subdomain": {
			route: map[string]string{"/a/feed.ics": "http://sub.feeds.test:" + p + "/b/feed.ics"},
			clean: []string{"sub.feeds.test:" + p},
		},
		// Once a redirect has left the feed's host, the chain is in a
		// stranger's hands: secrets do not come back even on the way home.
		"away and back": {
			route: map[string]string{
				"/a/feed.ics": "http://cdn.test:" + p + "/b/feed.ics",
				"/b/feed.ics": "http://feeds.test:" + p + "/c/feed.ics",
			},
			clean: []string{"cdn.test:" + p, "feeds.test:" + p + "/c/feed.ics"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			rec.mu.Lock()
			rec.got, rec.routes = nil, tt.route
			rec.mu.Unlock()
			other.mu.Lock()
			other.got = nil
			other.mu.Unlock()
			f := loopbackFetcher(t, nil)
			if _, err := f.Fetch(context.Background(), secretRequest("http://feeds.test:"+p+"/a/feed.ics")); err != nil {
				t.Fatal(err)
			}
			all := append(rec.requests(), other.requests()...)
			if len(all) < 2 {
				t.Fatalf("the redirect was not followed: %v", all)
			}
			if all[0].Header.Get("X-Feed-Token") != "hdr-secret" {
				t.Fatalf("the first request lacks the configured header")
			}
			checked := 0
			for _, s := range all {
				for _, want := range tt.clean {
					if s.Host == want || s.Host+s.Path == want {
						checked++
						if l := leaks(s); len(l) > 0 {
							t.Errorf("%s%s received %v", s.Host, s.Path, l)
						}
						if s.Header.Get("User-Agent") == "" || s.Header.Get("If-None-Match") != `"v1"` {
							t.Errorf("%s%s lost the User-Agent or validators: %v", s.Host, s.Path, s.Header)
						}
					}
				}
			}
			if checked != len(tt.clean) {
				t.Errorf("checked %d requests, want %d: %v", checked, len(tt.clean), all)
			}
		})
	}
}

func TestRedirectFromHTTPSToHTTPIsRefused(t *testing.T) {
	plain := &recorder{routes: map[string]string{}}
	plainSrv := httptest.NewServer(plain)
	defer plainSrv.Close()
	secure := &recorder{routes: map[string]string{}}
	secureSrv := httptest.NewTLSServer(secure)
	defer secureSrv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(secureSrv.Certificate())
	secure.routes["/private/tok-123/feed.ics"] = "http://example.com:" + port(t, plainSrv) + "/landing?token=tok-123"

	f := loopbackFetcher(t, roots)
	_, err := f.Fetch(context.Background(), secretRequest("https://example.com:"+port(t, secureSrv)+"/private/tok-123/feed.ics?key=q-secret"))
	fe := fetchErr(t, err)
	if fe.Kind != fetch.Rejected {
		t.Errorf("kind %s, want a permanent rejection", fe.Kind)
	}
	if !strings.Contains(err.Error(), "https to http") {
		t.Errorf("error does not say why: %v", err)
	}
	for _, secret := range []string{"tok-123", "q-secret", "/private", "/landing", "feed.ics"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q leaks %q", err, secret)
		}
	}
	if got := plain.requests(); len(got) != 0 {
		t.Errorf("the plain-http server was asked: %v", got)
	}
	if got := secure.requests(); len(got) != 1 {
		t.Errorf("the https server got %d requests, want 1", len(got))
	}
}
