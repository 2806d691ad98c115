package status

import (
	"net"
	"net/http"
	"strings"
)

// Loopback is not a trust boundary for a browser: any web page can POST
// to 127.0.0.1, and a name the attacker controls can be rebound to
// 127.0.0.1 so that the browser treats the status endpoint as the
// attacker's own site. guard answers only to this endpoint's
// names, refuses cross-origin requests that change state, and tells
// browsers not to frame, sniff, refer or run anything.
func (s *Server) guard(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "cross-origin request refused: a sync can be requested by calsyncd sync, curl or the endpoint's own page, not by another site"})
	}))
	inner := cop.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		if !s.hostAllowed(r.Host) {
			http.Error(w, "misdirected request: this status endpoint does not answer to that host name; if it should, add the name to status.allowed_hosts", http.StatusMisdirectedRequest)
			return
		}
		inner.ServeHTTP(w, r)
	})
}

// contentSecurityPolicy allows the status page's one stylesheet, by its
// hash, and nothing else: no script, no frame, no form, no fetch.
var contentSecurityPolicy = "default-src 'none'; style-src '" + pageStyleHash + "'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	// Another site must not embed /status or /metrics as a resource either.
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// hostAllowed reports whether a request's Host names this endpoint:
// localhost or a loopback address, the host of listen, a name in
// status.allowed_hosts, or, when listening on every address, any IP
// address (an address cannot be rebound; a name can). A request without
// Host (HTTP/1.0) passes: no browser sends one.
func (s *Server) hostAllowed(hostport string) bool {
	if hostport == "" {
		return true
	}
	var listen string
	var extra []string
	if s.opts.Config != nil {
		if cfg := s.opts.Config(); cfg != nil {
			listen, extra = cfg.Listen, cfg.Status.AllowedHosts
		}
	}
	host := normalHost(hostport)
	if host == "localhost" {
		return true
	}
	lhost, _, err := net.SplitHostPort(listen)
	if err != nil {
		lhost = listen
	}
	lhost = normalHost(lhost)
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsLoopback() {
			return true
		}
		lip := net.ParseIP(lhost)
		if lhost == "" || lip != nil && lip.IsUnspecified() {
			return true
		}
		return lip != nil && lip.Equal(ip)
	}
	if host == lhost {
		return true
	}
	for _, a := range extra {
		if normalHost(a) == host {
			return true
		}
	}
	return false
}

// normalHost is a Host header's or a configured host's name: no port, no
// brackets, lower case, no trailing dot.
func normalHost(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.TrimSuffix(strings.ToLower(host), ".")
}
