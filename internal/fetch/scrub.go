package fetch

import (
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/calsyncd/calsyncd/internal/printable"
)

// ServerText is text a feed server chose: the reason phrase of its status
// line, a header's value, a transport error quoting its bytes. Servers
// echo the request in it ("404 Not Found: /private/basic.ics?token=…"),
// so it may hold the feed's secrets. It has no way out but Scrubber.Clean:
// printed by any fmt verb it shows a placeholder, never its words.
type ServerText struct{ raw string }

// serverText wraps what a server wrote.
func serverText(s string) ServerText { return ServerText{raw: s} }

const serverPlaceholder = "(text from the feed server)"

func (ServerText) String() string   { return serverPlaceholder }
func (ServerText) GoString() string { return serverPlaceholder }

// Format prints the placeholder whatever the verb (%s, %v, %q, %x, %#v).
func (ServerText) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, serverPlaceholder) }

// minSecret is the shortest value scrubbed on its own: shorter ones ("1",
// "ics") would mangle the text and are no secrets worth the name. Whole
// URLs, paths and queries are scrubbed whatever their length.
const minSecret = 6

// scrubbed replaces a secret in server text.
const scrubbed = "…"

// Scrubber removes a feed's secrets from what its server wrote: the URL
// (as configured and as a redirect left it), its path and each segment of
// it, its query and each value, in raw and decoded form, the userinfo,
// the configured headers' values and the basic-auth credentials. Matching
// ignores case: servers lower-case and re-encode what they echo.
type Scrubber struct{ secrets []string }

// NewScrubber is the scrubber of one request's secrets; also names the
// URLs a redirect reached (their queries are the server's own tokens).
func NewScrubber(req Request, reached ...*url.URL) Scrubber {
	var sc Scrubber
	sc.addURL(req.URL)
	for _, u := range reached {
		if u != nil {
			sc.addURL(u.String())
		}
	}
	for _, v := range req.Headers {
		sc.add(v, minSecret)
	}
	if req.BasicAuth != nil {
		sc.add(req.BasicAuth.Password, 1)
		sc.add(req.BasicAuth.Username, minSecret)
	}
	// Longest first, so a URL goes before its own path.
	slices.SortFunc(sc.secrets, func(a, b string) int { return len(b) - len(a) })
	sc.secrets = slices.Compact(sc.secrets)
	return sc
}

func (sc *Scrubber) add(v string, least int) {
	if len(v) >= least {
		sc.secrets = append(sc.secrets, v)
	}
	if d, err := url.QueryUnescape(v); err == nil && d != v && len(d) >= least {
		sc.secrets = append(sc.secrets, d)
	}
}

func (sc *Scrubber) addURL(raw string) {
	sc.add(raw, 1)
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	sc.add(strings.TrimPrefix(u.Host+u.RequestURI(), "/"), minSecret)
	if u.Path != "" && u.Path != "/" {
		sc.add(u.RequestURI(), 1)
		sc.add(u.EscapedPath(), 1)
		sc.add(u.Path, 1)
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		sc.add(seg, minSecret)
	}
	if u.RawQuery != "" {
		sc.add(u.RawQuery, 1)
		for _, part := range strings.Split(u.RawQuery, "&") {
			sc.add(part, minSecret)
			if _, v, ok := strings.Cut(part, "="); ok {
				sc.add(v, minSecret)
			}
		}
	}
	if u.Fragment != "" {
		sc.add(u.Fragment, minSecret)
	}
	if p, ok := u.User.Password(); ok {
		sc.add(p, 1)
	}
	sc.add(u.User.Username(), minSecret)
}

// maxServerText bounds how much of a server's text an output keeps.
const maxServerText = 80

// Clean is server text as an output may show it: the secrets removed,
// escaped (a hostile server's ANSI escapes must not reach an operator's
// terminal) and cut short.
func (sc Scrubber) Clean(t ServerText) string {
	s := sc.remove(strings.ToValidUTF8(t.raw, "\uFFFD"))
	if utf8.RuneCountInString(s) > maxServerText {
		s = string([]rune(s)[:maxServerText]) + "…"
	}
	return printable.String(s)
}

// remove replaces every secret, in any case, before anything else.
func (sc Scrubber) remove(s string) string {
	for _, v := range sc.secrets {
		s = replaceFold(s, v, scrubbed)
	}
	return s
}

// replaceFold replaces old in s, matching without regard to case.
func replaceFold(s, old, repl string) string {
	if old == "" {
		return s
	}
	ls, lo := strings.ToLower(s), strings.ToLower(old)
	if len(ls) != len(s) || len(lo) != len(old) {
		// Case mapping changed a length (rare non-ASCII): match exactly.
		return strings.ReplaceAll(s, old, repl)
	}
	var b strings.Builder
	for {
		i := strings.Index(ls, lo)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(repl)
		s, ls = s[i+len(old):], ls[i+len(old):]
	}
}

// scrubbedError is an error whose text went through a Scrubber (a
// transport error may quote what the server sent); errors.Is and As still
// see the error beneath.
type scrubbedError struct {
	err  error
	text string
}

func (e *scrubbedError) Error() string { return e.text }
func (e *scrubbedError) Unwrap() error { return e.err }

// scrubErr is err with its text cleaned as server text.
func (sc Scrubber) scrubErr(err error) error {
	if err == nil {
		return nil
	}
	text := printable.String(sc.remove(strings.ToValidUTF8(err.Error(), "\uFFFD")))
	return &scrubbedError{err: err, text: text}
}
