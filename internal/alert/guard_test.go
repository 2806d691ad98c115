package alert_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/calsyncd/calsyncd/internal/config"
)

// A webhook that answers with a redirect to another host (the
// alert, the token-bearing Referer and the secret headers followed
// it). No redirect is followed, whatever the client: the second host hears
// nothing, and the delivery fails at once with a message that names the
// status and holds no secret.
func TestWebhookRedirectsAreNotFollowed(t *testing.T) {
	clients := map[string]func() *http.Client{
		"default client":      func() *http.Client { return nil },
		"a client of its own": func() *http.Client { return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()} },
		"a client that redirects": func() *http.Client {
			return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
		},
	}
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for name, client := range clients {
			t.Run(fmt.Sprintf("%d/%s", code, name), func(t *testing.T) {
				elsewhere := &receiver{}
				second := httptest.NewServer(elsewhere)
				defer second.Close()
				hook := &receiver{}
				first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					hook.ServeHTTP(discard{}, r)
					http.Redirect(w, r, second.URL+"/collect?stolen=1", code)
				}))
				defer first.Close()
				s := newSetup(t, client(), config.Alert{URL: first.URL + "/hook?token=HOOKTOKEN",
					Headers: map[string]string{"X-Api-Key": "WEBHOOKSECRET"}})
				n := s.start(t)
				n.Settled(s.at(failing("team", 3)))
				flush(t, n)
				if got := elsewhere.requests(); len(got) != 0 {
					t.Fatalf("the redirect's target was sent %d requests: %+v", len(got), got[0].header)
				}
				got := hook.requests()
				if len(got) != 1 {
					t.Fatalf("the webhook was sent %d requests, want 1 (a redirect is not retried)", len(got))
				}
				if ref := got[0].header.Get("Referer"); ref != "" {
					t.Errorf("the webhook was sent Referer %q", ref)
				}
				logs := s.logs.String()
				if s.counts.get("error_entered/failed") != 1 || !strings.Contains(logs, fmt.Sprintf("answered %d", code)) ||
					!strings.Contains(logs, "do not follow redirects") {
					t.Errorf("the refusal does not say the webhook redirected:\n%s", logs)
				}
				for _, secret := range []string{"HOOKTOKEN", "WEBHOOKSECRET", "/hook", "stolen", "/collect"} {
					if strings.Contains(logs, secret) {
						t.Errorf("the log holds %q:\n%s", secret, logs)
					}
				}
			})
		}
	}
}

// resolver is a fake alert.Resolver.
type resolver struct {
	mu     sync.Mutex
	addrs  map[string][]string
	looked []string
}

func (r *resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.looked = append(r.looked, host)
	var out []netip.Addr
	for _, a := range r.addrs[host] {
		out = append(out, netip.MustParseAddr(a))
	}
	if len(out) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}

func (r *resolver) lookups() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.looked...)
}

// dials records the addresses a dialer was about to connect to, and
// connects to none: the test touches no network beyond its own process.
type dials struct {
	mu   sync.Mutex
	addr []string
}

func (d *dials) control(_, address string, _ syscall.RawConn) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addr = append(d.addr, address)
	return errors.New("test: no connection is made")
}

func (d *dials) got() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addr...)
}

// Link-local and cloud metadata addresses are refused before any
// connection, whether the URL names them or a name resolves to them (at
// dial time, so a rebinding cannot get round it), unless the webhook has
// allow_link_local.
func TestLinkLocalAndMetadataWebhooksAreRefused(t *testing.T) {
	names := map[string][]string{
		"hook.invalid":     {"169.254.169.254"},
		"mapped.invalid":   {"::ffff:169.254.169.254"},
		"v6.invalid":       {"fe80::1"},
		"aws.invalid":      {"fd00:ec2::254"},
		"mixed.invalid":    {"169.254.169.254", "127.0.0.1"},
		"ordinary.invalid": {"192.0.2.7"},
	}
	tests := []struct {
		name   string
		url    string
		allow  bool
		lookup bool     // the name is looked up
		dialed []string // addresses a connection was attempted to
	}{
		{name: "metadata address", url: "http://169.254.169.254/latest/meta-data/s3cret"},
		{name: "link-local address", url: "http://169.254.1.2:8080/s3cret"},
		{name: "ipv6 link-local address", url: "http://[fe80::1%25eth0]:8080/s3cret"},
		{name: "aws ipv6 metadata address", url: "http://[fd00:ec2::254]/s3cret"},
		{name: "ipv4-mapped metadata address", url: "http://[::ffff:169.254.169.254]/s3cret"},
		{name: "metadata name", url: "http://metadata.google.internal/computeMetadata/v1/s3cret"},
		{name: "metadata name, other case, final dot", url: "http://Metadata.Google.Internal./s3cret"},
		{name: "a name that resolves to the metadata address", url: "http://hook.invalid/s3cret", lookup: true},
		{name: "a name that resolves to a mapped address", url: "http://mapped.invalid/s3cret", lookup: true},
		{name: "a name that resolves to ipv6 link-local", url: "https://v6.invalid/s3cret", lookup: true},
		{name: "a name that resolves to aws metadata", url: "http://aws.invalid/s3cret", lookup: true},
		{name: "a name with a forbidden and an ordinary address", url: "http://mixed.invalid/s3cret", lookup: true,
			dialed: []string{"127.0.0.1:80"}},
		{name: "an ordinary address", url: "http://192.0.2.7/s3cret", dialed: []string{"192.0.2.7:80"}},
		{name: "an ordinary name", url: "http://ordinary.invalid/s3cret", lookup: true, dialed: []string{"192.0.2.7:80"}},
		{name: "allowed: metadata address", url: "http://169.254.169.254/s3cret", allow: true, dialed: []string{"169.254.169.254:80"}},
		{name: "allowed: a name that resolves to it", url: "http://hook.invalid/s3cret", allow: true, lookup: true,
			dialed: []string{"169.254.169.254:80"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &resolver{addrs: names}
			d := &dials{}
			s := newSetup(t, nil, config.Alert{URL: tt.url, AllowLinkLocal: tt.allow, Headers: map[string]string{"X-Api-Key": "WEBHOOKSECRET"}})
			s.o.Resolver, s.o.Dialer, s.o.MaxAttempts = res, &net.Dialer{Control: d.control}, 1
			n := s.start(t)
			n.Settled(s.at(failing("team", 3)))
			flush(t, n)
			if got := d.got(); strings.Join(got, " ") != strings.Join(tt.dialed, " ") {
				t.Errorf("connections attempted to %v, want %v", got, tt.dialed)
			}
			if got := len(res.lookups()) > 0; got != tt.lookup {
				t.Errorf("looked up %v, want a lookup: %v", res.lookups(), tt.lookup)
			}
			logs := s.logs.String()
			refused := strings.Contains(logs, "link-local or cloud metadata address") && strings.Contains(logs, "allow_link_local: true")
			if want := !tt.allow && len(tt.dialed) == 0; refused != want {
				t.Errorf("refused: %v, want %v:\n%s", refused, want, logs)
			}
			if s.counts.get("error_entered/failed") != 1 {
				t.Errorf("the alert was not counted as failed:\n%s", logs)
			}
			for _, secret := range []string{"s3cret", "WEBHOOKSECRET", "meta-data", "computeMetadata"} {
				if strings.Contains(logs, secret) {
					t.Errorf("the log holds %q:\n%s", secret, logs)
				}
			}
		})
	}
}
