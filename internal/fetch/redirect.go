package fetch

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// maxRedirects is how many redirects a fetch follows.
const maxRedirects = 5

// setOwnHeaders sets the headers calsyncd sends on its own account: they
// carry nothing secret and go to every host a redirect names.
func setOwnHeaders(h http.Header) {
	h.Set("User-Agent", "calsyncd/"+Version)
	h.Set("Accept", "text/calendar, */*;q=0.5")
}

// client is the Fetcher's client with calsyncd's redirect policy, however
// the Fetcher was built.
func (f *Fetcher) client() *http.Client {
	c := http.Client{}
	if f.Client != nil {
		c = *f.Client
	}
	c.CheckRedirect = checkRedirect
	return &c
}

// checkRedirect keeps a feed's secrets with the feed's host. A private feed
// is often a token in the URL, a configured header or basic auth; a
// redirect is the server's word, and a server (or whoever took over a
// lapsed domain it redirects to) must not be able to send them elsewhere:
//   - no Referer, ever (net/http sends the previous URL, token and all);
//   - once a redirect leaves the first request's host — another name,
//     another port, even a subdomain — the request carries only what
//     calsyncd sends on its own account (User-Agent, Accept and the
//     validators, which are not secret): no configured header, no basic
//     auth, no cookie. This holds for the rest of the chain, also when it
//     comes back to the first host: a stranger chose that hop;
//   - https is never followed to plain http.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	first := via[0]
	for _, v := range via {
		if v.URL.Scheme == "https" && req.URL.Scheme != "https" {
			return &downgradeError{to: req.URL.Hostname()}
		}
	}
	req.Header.Del("Referer")
	left := !sameHost(first.URL, req.URL)
	for _, hop := range via[1:] {
		left = left || !sameHost(first.URL, hop.URL)
	}
	if left {
		strip(req.Header)
	}
	return nil
}

// strip leaves only the headers calsyncd sends on its own account.
func strip(h http.Header) {
	inm, ims := h.Get("If-None-Match"), h.Get("If-Modified-Since")
	clear(h)
	setOwnHeaders(h)
	if inm != "" {
		h.Set("If-None-Match", inm)
	}
	if ims != "" {
		h.Set("If-Modified-Since", ims)
	}
}

// sameHost reports whether b is a's host: the same name and port, or the
// upgrade of http://host to https://host on their default ports.
func sameHost(a, b *url.URL) bool {
	if !strings.EqualFold(a.Hostname(), b.Hostname()) {
		return false
	}
	if a.Scheme == b.Scheme {
		return effectivePort(a) == effectivePort(b)
	}
	return a.Scheme == "http" && b.Scheme == "https" && effectivePort(a) == "80" && effectivePort(b) == "443"
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch u.Scheme {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// downgradeError refuses a redirect from https to plain http. It names the
// target's host only: its path and query may carry the feed's token.
type downgradeError struct{ to string }

func (e *downgradeError) Error() string {
	return fmt.Sprintf("refused a redirect from https to http (to host %s): it would send the feed's address and credentials unencrypted", e.to)
}
