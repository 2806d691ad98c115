package alert

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
)

// An alert carries a webhook's secrets (its URL's token, its headers) and
// the alert itself. Where it may go is decided here, once per request:
//   - no redirect is followed: a 3xx is a failed delivery. The feeds'
//     policy (secrets stay with the first host) would still post the body
//     to wherever a 307 points, and a webhook that moved is better fixed in
//     the configuration than followed;
//   - no Referer is sent (net/http sends one only on redirects, so never);
//   - a link-local or cloud metadata address (config.LinkLocalOrMetadata,
//     config.MetadataHost) is refused unless the webhook says
//     allow_link_local: by its URL before anything is sent (a proxy would
//     otherwise dial it for us), and by the address actually dialled, so a
//     name that resolves there, now or after a rebinding, is refused too.

// AddressRefusedError is a delivery refused for where it would go.
type AddressRefusedError struct {
	// Host is the refused name or address (never the URL's path or query).
	Host string
}

func (e *AddressRefusedError) Error() string {
	return e.Host + " is a link-local or cloud metadata address; alerts are not posted there unless the webhook has allow_link_local: true"
}

// RedirectError is a webhook's redirect, which is never followed.
type RedirectError struct{ Code int }

func (e *RedirectError) Error() string {
	return fmt.Sprintf("the webhook answered %d %s, a redirect: alerts do not follow redirects (they would take the alert and its headers elsewhere); set the webhook's url to where it points", e.Code, http.StatusText(e.Code))
}

// Resolver looks up a webhook's addresses; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// webhookClient is the client a webhook is posted to with: o.Client's,
// with no redirects followed and target's address rules. Without a
// Transport of its own it dials through the address check; with one (a
// test's, in memory), only the URL is checked.
func webhookClient(o Options, target config.Alert) *http.Client {
	c := *o.Client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	base := c.Transport
	if base == nil {
		g := &dialGuard{allow: target.AllowLinkLocal, resolver: o.Resolver, dialer: o.Dialer}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DialContext = g.DialContext
		base = tr
	}
	c.Transport = &urlGuard{allow: target.AllowLinkLocal, next: base}
	return &c
}

// urlGuard refuses a request for a link-local or metadata host before
// anything is sent, and never sends a Referer.
type urlGuard struct {
	allow bool
	next  http.RoundTripper
}

func (g *urlGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if !g.allow {
		host := req.URL.Hostname()
		if ip, err := netip.ParseAddr(host); config.MetadataHost(host) || err == nil && config.LinkLocalOrMetadata(ip) {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, &AddressRefusedError{Host: host}
		}
	}
	if req.Header.Get("Referer") != "" {
		req = req.Clone(req.Context())
		req.Header.Del("Referer")
	}
	return g.next.RoundTrip(req)
}

// dialGuard connects to a webhook's addresses, one after another, each
// checked as it is dialled (net.Dialer.Control): what is checked is what is
// connected to.
type dialGuard struct {
	allow    bool
	resolver Resolver
	dialer   *net.Dialer
}

func (g *dialGuard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if !g.allow && config.MetadataHost(host) {
		return nil, &AddressRefusedError{Host: host}
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else if ips, err = g.resolver.LookupNetIP(ctx, ipNetwork(network), host); err != nil {
		return nil, err
	}
	d := *g.dialer
	control := d.Control
	d.Control = func(network, address string, c syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("alerts: dialling %q, not an address", address)
		}
		if !g.allow && config.LinkLocalOrMetadata(ap.Addr()) {
			return &AddressRefusedError{Host: ap.Addr().String()}
		}
		if control != nil {
			return control(network, address, c)
		}
		return nil
	}
	// Refused only when every address is: an ordinary one that fails may
	// answer next time.
	var refused *AddressRefusedError
	var errs []error
	for _, ip := range ips {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		var r *AddressRefusedError
		if errors.As(err, &r) {
			refused = cmp.Or(refused, r)
			continue
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	switch {
	case len(errs) > 0:
		return nil, errors.Join(errs...)
	case refused != nil:
		return nil, refused
	}
	return nil, fmt.Errorf("alerts: %s has no address", host)
}

func ipNetwork(network string) string {
	switch network {
	case "tcp4":
		return "ip4"
	case "tcp6":
		return "ip6"
	}
	return "ip"
}

// defaultDialer connects webhooks when Options.Dialer is not set.
func defaultDialer() *net.Dialer {
	return &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
}
