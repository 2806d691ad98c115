package status_test

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/status"
)

// handler is the status server's handler for a configuration listening
// on listen (with token and allowed hosts).
func handler(t *testing.T, d *fakeDaemon, listen, token string, allowed ...string) http.Handler {
	t.Helper()
	st, cfg := fixture(t)
	cfg.Listen, cfg.Status.Token, cfg.Status.AllowedHosts = listen, token, allowed
	return status.NewServer(status.ServerOptions{Source: st, Config: func() *config.Config { return cfg }, Daemon: d,
		Metrics: status.NewMetrics(), Token: token, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return t0 }}).Handler()
}

func serve(h http.Handler, method, host, path string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "http://"+host+path, nil)
	req.Host = host
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// DNS rebinding: a name the attacker controls resolves to 127.0.0.1, and
// the browser sends it as Host. Only loopback names and addresses, the
// configured host and status.allowed_hosts are answered (DNS rebinding
// must not reach the endpoint).
func TestHostMustBeThisEndpoint(t *testing.T) {
	tests := []struct {
		name, listen, token string
		allowed             []string
		host                string
		ok                  bool
	}{
		{"loopback address", "127.0.0.1:8765", "", nil, "127.0.0.1:8765", true},
		{"another loopback address", "127.0.0.1:8765", "", nil, "127.0.0.2:8765", true},
		{"localhost", "127.0.0.1:8765", "", nil, "localhost:8765", true},
		{"localhost in capitals, with a dot", "127.0.0.1:8765", "", nil, "LOCALHOST.:8765", true},
		{"ipv6 loopback", "127.0.0.1:8765", "", nil, "[::1]:8765", true},
		{"no port", "127.0.0.1:8765", "", nil, "127.0.0.1", true},
		{"rebound name", "127.0.0.1:8765", "", nil, "attacker.example:8765", false},
		{"rebound name without port", "127.0.0.1:8765", "", nil, "attacker.example", false},
		{"a name that embeds the address", "127.0.0.1:8765", "", nil, "127.0.0.1.nip.io:8765", false},
		{"a subdomain of localhost", "127.0.0.1:8765", "", nil, "evil.localhost:8765", false},
		{"another machine's address", "127.0.0.1:8765", "", nil, "192.0.2.10:8765", false},
		{"configured name", "calsyncd.internal:8765", "tok", nil, "calsyncd.internal:8765", true},
		{"configured name, other case", "calsyncd.internal:8765", "tok", nil, "CalSyncD.Internal:8765", true},
		{"not the configured name", "calsyncd.internal:8765", "tok", nil, "attacker.example:8765", false},
		{"configured address", "192.0.2.10:8765", "tok", nil, "192.0.2.10:8765", true},
		{"not the configured address", "192.0.2.10:8765", "tok", nil, "192.0.2.11:8765", false},
		{"wildcard listen: an address", "0.0.0.0:8765", "tok", nil, "192.0.2.10:8765", true},
		{"wildcard listen: ipv6 address", "[::]:8765", "tok", nil, "[2001:db8::1]:8765", true},
		{"wildcard listen: a name", "0.0.0.0:8765", "tok", nil, "attacker.example:8765", false},
		{"wildcard listen: an allowed name", "0.0.0.0:8765", "tok", []string{"status.example.com"}, "status.example.com", true},
		{"allowed name, other case", "127.0.0.1:8765", "", []string{"status.example.com"}, "Status.Example.COM:443", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := handler(t, &fakeDaemon{running: true, runID: 1}, tt.listen, tt.token, tt.allowed...)
			for _, path := range []string{"/healthz", "/status", "/", "/metrics"} {
				rec := serve(h, "GET", tt.host, path, map[string]string{"Authorization": "Bearer " + tt.token})
				if got := rec.Code != http.StatusMisdirectedRequest; got != tt.ok {
					t.Errorf("%s with Host %s: %d", path, tt.host, rec.Code)
				}
			}
			rec := serve(h, "POST", tt.host, "/subscriptions/team/sync", map[string]string{"Authorization": "Bearer " + tt.token})
			if got := rec.Code == http.StatusAccepted; got != tt.ok {
				t.Errorf("POST with Host %s: %d", tt.host, rec.Code)
			}
			if !tt.ok && strings.Contains(rec.Body.String(), tt.host) {
				t.Errorf("the refusal repeats the Host header: %q", rec.Body.String())
			}
		})
	}
}

// A web page on any site could POST to the loopback endpoint (cross-site
// request forgery). Cross-origin state-changing requests are refused;
// same-origin ones and those of non-browser clients pass.
func TestCrossOriginSyncIsRefused(t *testing.T) {
	tests := []struct {
		name   string
		header map[string]string
		ok     bool
	}{
		{"curl or calsyncd sync", nil, true},
		{"the page itself", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:8765"}, true},
		{"typed by the user", map[string]string{"Sec-Fetch-Site": "none"}, true},
		{"same origin, older browser", map[string]string{"Origin": "http://127.0.0.1:8765"}, true},
		{"another site", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, false},
		{"another port of localhost", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:3000"}, false},
		{"another site, older browser", map[string]string{"Origin": "https://evil.example"}, false},
		{"a sandboxed frame", map[string]string{"Origin": "null"}, false},
		{"cross-site without Origin", map[string]string{"Sec-Fetch-Site": "cross-site"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &fakeDaemon{running: true, runID: 7}
			h := handler(t, d, "127.0.0.1:8765", "")
			rec := serve(h, "POST", "127.0.0.1:8765", "/subscriptions/team/sync", tt.header)
			if tt.ok && (rec.Code != http.StatusAccepted || len(d.got) != 1) {
				t.Errorf("refused: %d %s", rec.Code, rec.Body)
			}
			if !tt.ok && (rec.Code != http.StatusForbidden || len(d.got) != 0) {
				t.Errorf("got %d and triggered %v, want 403 and nothing run", rec.Code, d.got)
			}
		})
	}
	// Reading stays possible from anywhere the Host check lets in: the
	// browser's same-origin policy keeps another site from reading it.
	h := handler(t, &fakeDaemon{running: true}, "127.0.0.1:8765", "")
	if rec := serve(h, "GET", "127.0.0.1:8765", "/status", map[string]string{"Sec-Fetch-Site": "cross-site"}); rec.Code != http.StatusOK {
		t.Errorf("GET /status: %d", rec.Code)
	}
}

var securityHeaders = map[string]string{
	"X-Content-Type-Options":       "nosniff",
	"X-Frame-Options":              "DENY",
	"Referrer-Policy":              "no-referrer",
	"Cross-Origin-Resource-Policy": "same-origin",
}

func TestEveryResponseCarriesSecurityHeaders(t *testing.T) {
	tests := []struct {
		name, method, host, path, token string
		header                          map[string]string
		code                            int
	}{
		{"page", "GET", "127.0.0.1:8765", "/", "", nil, 200},
		{"status", "GET", "127.0.0.1:8765", "/status", "", nil, 200},
		{"metrics", "GET", "127.0.0.1:8765", "/metrics", "", nil, 200},
		{"healthz", "GET", "127.0.0.1:8765", "/healthz", "", nil, 200},
		{"trigger", "POST", "127.0.0.1:8765", "/subscriptions/team/sync", "", nil, 202},
		{"not found", "GET", "127.0.0.1:8765", "/nope", "", nil, 404},
		{"wrong method", "GET", "127.0.0.1:8765", "/subscriptions/team/sync", "", nil, 405},
		{"no token", "GET", "127.0.0.1:8765", "/status", "tok", nil, 401},
		{"wrong host", "GET", "attacker.example:8765", "/status", "", nil, 421},
		{"cross-site", "POST", "127.0.0.1:8765", "/subscriptions/team/sync", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := handler(t, &fakeDaemon{running: true, runID: 1}, "127.0.0.1:8765", tt.token)
			rec := serve(h, tt.method, tt.host, tt.path, tt.header)
			if rec.Code != tt.code {
				t.Fatalf("code %d, want %d", rec.Code, tt.code)
			}
			for k, v := range securityHeaders {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			csp := rec.Header().Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe") {
				t.Errorf("Content-Security-Policy allows unsafe sources: %q", csp)
			}
		})
	}
}

// The policy allows the page's one stylesheet by its hash and nothing
// else: no inline style attributes, no scripts. (The Chromium test checks
// that a browser applying the policy still renders the page.)
func TestPageFitsItsContentSecurityPolicy(t *testing.T) {
	h := handler(t, &fakeDaemon{running: true}, "127.0.0.1:8765", "")
	rec := serve(h, "GET", "127.0.0.1:8765", "/", nil)
	page := rec.Body.String()
	m := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(page, -1)
	if len(m) != 1 {
		t.Fatalf("the page has %d style elements, want 1", len(m))
	}
	sum := sha256.Sum256([]byte(m[0][1]))
	hash := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	csp := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "style-src "+hash) {
		t.Errorf("Content-Security-Policy %q does not allow the page's stylesheet %s", csp, hash)
	}
	for _, banned := range []string{` style="`, "<script", "javascript:"} {
		if strings.Contains(page, banned) {
			t.Errorf("the page uses %q, which the policy forbids", banned)
		}
	}
	if on := regexp.MustCompile(`<[^>]*\son[a-z]+=`).FindString(page); on != "" {
		t.Errorf("the page has an event handler attribute, which the policy forbids: %s", on)
	}
}
