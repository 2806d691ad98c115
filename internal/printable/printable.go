// Package printable makes untrusted text safe to show on a terminal. A feed
// server's status text, an event's UID or an error message from Google may
// carry escape sequences that recolour the screen, move the cursor, rewrite
// a line with a carriage return, or retitle the terminal; printed as they
// are, they let a feed server forge what an operator reads.
package printable

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// String returns s with every control character (C0, DEL and C1), every
// Unicode bidirectional control and line separator, and every byte of
// invalid UTF-8 written as a visible Go-style escape (\x1b, \r, \u202e), so
// that it prints as one line of exactly the text it holds.
func String(s string) string { return escape(s, false) }

// Lines is String for messages of several lines: line feeds and tabs stay,
// everything else String escapes is escaped.
func Lines(s string) string { return escape(s, true) }

func escape(s string, keepLines bool) string {
	if clean(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean reports whether s needs no escaping (the common case costs one scan
// and no allocation).
func clean(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				if !keepLines || (c != '\n' && c != '\t') {
					return false
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafe(r) {
			return false
		}
		i += size
	}
	return true
}

// unsafe reports the non-ASCII runes a terminal may act on: C1 controls
// (0x9b is a one-byte CSI on some terminals), bidirectional controls that
// reorder what is shown (as in "Trojan Source"), the bidirectional marks,
// and the Unicode line and paragraph separators.
func unsafe(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case BidiControl(r):
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// Control reports whether r is a control character: C0 (U+0000–U+001F,
// tab and line feed included), DEL or C1 (U+0080–U+009F).
func Control(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f }

// BidiControl reports whether r is a Unicode bidirectional embedding,
// override or isolate (U+202A–U+202E, U+2066–U+2069): characters that
// reorder the text around them, so that what is shown is not what is
// written (U+202E makes "gnp.exe" read "exe.png"). The bidirectional marks
// (U+200E, U+200F, U+061C) reorder nothing but the neutral characters next
// to them, and right-to-left text needs them; they are not included.
func BidiControl(r rune) bool { return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 }
