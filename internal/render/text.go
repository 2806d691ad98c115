package render

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/printable"
)

// Caps on the text an event shows in Google, in characters counted as
// UTF-16 code units (the most any count of characters gives: a character
// beyond the Basic Multilingual Plane, such as an emoji, counts two).
// Google's API reference gives no limit on these fields; the caps are
// what Google is reported to accept (the description) or chosen far
// beyond any title, place or link a calendar shows (the others), so that a
// feed or a title template cannot send megabytes to Google or into a
// dry-run. Text beyond a cap is cut at a character and ends in "…"; a link
// beyond its cap is dropped, since a cut link leads elsewhere.
const (
	// MaxSummary caps the title (and the title template's expansion).
	MaxSummary = 1024
	// MaxLocation caps the location.
	MaxLocation = 1024
	// MaxDescription caps the description: Google is reported to refuse
	// or cut descriptions beyond about 8,192 characters.
	MaxDescription = 8000
	// MaxURL caps the link (the event's source), in bytes: the longest
	// URI Google's Calendar API documents (a conference entry point's).
	MaxURL = 1300
)

// Ellipsis ends text that was cut at its cap.
const Ellipsis = "…"

// text is text on its way to Google: control characters and the
// bidirectional embeddings, overrides and isolates left out, line breaks
// kept (lines) or made spaces, invalid UTF-8 left out, and at most max
// UTF-16 code units long. It stops taking text once it is full, so
// however much is written to it, it holds no more than its cap.
type text struct {
	b     strings.Builder
	max   int
	units int
	lines bool // keep line feeds and tabs (a description)
	trim  bool // leave out leading and trailing white space
	cut   bool // text was left out for the cap
	cr    bool // the previous rune was a carriage return
}

// WriteString adds s, as far as it fits.
func (t *text) WriteString(s string) {
	for i := 0; i < len(s) && !t.cut; {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r == utf8.RuneError && n == 1 {
			t.cr = false
			continue
		}
		t.writeRune(r)
	}
}

func (t *text) writeRune(r rune) {
	cr := t.cr
	t.cr = r == '\r'
	switch {
	case r == '\n' && cr:
		// The line feed of a CRLF: the carriage return made the break.
	case r == '\r', r == '\n', r == 0x85, r == 0x2028, r == 0x2029:
		t.add(t.lineBreak())
	case r == '\t':
		if t.lines {
			t.add('\t')
		} else {
			t.add(' ')
		}
	case printable.Control(r), printable.BidiControl(r):
	default:
		t.add(r)
	}
}

func (t *text) lineBreak() rune {
	if t.lines {
		return '\n'
	}
	return ' '
}

func (t *text) add(r rune) {
	if t.trim && t.b.Len() == 0 && unicode.IsSpace(r) {
		return
	}
	u := utf16.RuneLen(r)
	if t.units+u > t.max {
		t.cut = true
		return
	}
	t.b.WriteRune(r)
	t.units += u
}

// String is the text: trimmed when asked, and ending in Ellipsis (within
// the cap) when something was cut.
func (t *text) String() string {
	s := t.b.String()
	if t.trim || t.cut {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	if !t.cut {
		return s
	}
	units := 0
	for _, r := range s {
		units += utf16.RuneLen(r)
	}
	for units+1 > t.max && s != "" {
		r, n := utf8.DecodeLastRuneInString(s)
		s, units = s[:len(s)-n], units-utf16.RuneLen(r)
	}
	return strings.TrimRightFunc(s, unicode.IsSpace) + Ellipsis
}

// clean is s as it may reach Google: s itself when it needs nothing.
func clean(s string, max int, lines bool) string {
	if fits(s, max, lines) {
		return s
	}
	t := text{max: max, lines: lines}
	t.b.Grow(min(len(s), 4*max))
	t.WriteString(s)
	return t.String()
}

// fits reports whether s is within max UTF-16 code units and holds nothing
// clean would change (the common case: one scan, no allocation).
func fits(s string, max int, lines bool) bool {
	if len(s) <= max && ascii(s) {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c == 0x7f {
				if !lines || c != '\n' && c != '\t' {
					return false
				}
			}
		}
		return true
	}
	units := 0
	for i, r := range s {
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			return false
		}
		if printable.Control(r) && !(lines && (r == '\n' || r == '\t')) || printable.BidiControl(r) ||
			r == 0x2028 || r == 0x2029 {
			return false
		}
		if units += utf16.RuneLen(r); units > max {
			return false
		}
	}
	return true
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// cleanURL is the link as it may reach Google: "" when it is beyond
// MaxURL or holds a character clean would leave out (a link cut or
// altered would lead elsewhere).
func cleanURL(s string) string {
	if len(s) > MaxURL || !fits(s, MaxURL, false) {
		return ""
	}
	return s
}

// limitText applies the caps and the character rules to what the event
// shows; it reports whether anything changed.
func limitText(ev *feed.Event) bool {
	s, d, l, u := clean(ev.Summary, MaxSummary, false), clean(ev.Description, MaxDescription, true),
		clean(ev.Location, MaxLocation, false), cleanURL(ev.URL)
	changed := s != ev.Summary || d != ev.Description || l != ev.Location || u != ev.URL
	ev.Summary, ev.Description, ev.Location, ev.URL = s, d, l, u
	return changed
}
