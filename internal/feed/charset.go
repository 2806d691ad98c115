package feed

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/transform"
)

// declared is how a response's charset is honoured.
type declared struct {
	// body decodes the whole body before it is read: a multi-byte
	// charset (Shift_JIS, UTF-16...), whose bytes are not ASCII's where
	// ASCII is written.
	body *encoding.Decoder
	// text decodes the text values one by one: a single-byte charset
	// (ISO-8859-1, Windows-1252, KOI8-R...), which the evidence of the
	// bytes may overrule (see textCharset).
	text *charmap.Charmap
}

// decoderFor is how a declared charset is read: neither decoder when the
// body is to be read as UTF-8 (none declared, UTF-8 or ASCII, or a label
// no one knows: then text that is not UTF-8 falls back to Windows-1252
// value by value, as without a charset). Labels are read as browsers read
// them (WHATWG): ISO-8859-1 is Windows-1252, its superset.
func decoderFor(charset string) (declared, error) {
	cs := strings.ToLower(strings.Trim(strings.TrimSpace(charset), `"'`))
	switch cs {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
		return declared{}, nil
	}
	enc, err := htmlindex.Get(cs)
	if err != nil {
		return declared{}, fmt.Errorf("unknown charset %q", charset)
	}
	if name, _ := htmlindex.Name(enc); name == "utf-8" {
		return declared{}, nil
	}
	if cm, ok := enc.(*charmap.Charmap); ok {
		return declared{text: cm}, nil
	}
	return declared{body: enc.NewDecoder()}, nil
}

// decodeReader reads r through the declared charset's decoder.
func decodeReader(r io.Reader, dec *encoding.Decoder) io.Reader {
	return transform.NewReader(r, dec)
}

// decodeBytes decodes a whole body from the declared charset; a body the
// decoder cannot read is returned as it is (the per-value fallback then
// applies).
func decodeBytes(b []byte, dec *encoding.Decoder) []byte {
	out, err := dec.Bytes(b)
	if err != nil {
		return b
	}
	return out
}

// utf8Evidence counts, over a feed's values, the bytes that are part of a
// valid multi-byte UTF-8 sequence and the bytes that are not UTF-8.
// Text in a single-byte charset almost never forms valid multi-byte
// sequences (a lead byte must be followed by exactly the right number of
// bytes 0x80–0xBF), while UTF-8 damaged in a few places keeps most of
// its sequences: more valid than broken bytes is UTF-8.
type utf8Evidence struct {
	valid, broken int
}

// count adds a value's bytes.
func (e *utf8Evidence) count(b []byte) {
	high := highBytes(b)
	if high == 0 {
		return // ASCII: no evidence either way
	}
	if utf8.Valid(b) {
		e.valid += high
		return
	}
	v, x := multiByte(b)
	e.valid += v
	e.broken += x
}

// highBytes counts the bytes of b at or above utf8.RuneSelf, eight at a
// time.
func highBytes(b []byte) int {
	n := 0
	for len(b) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(b) & 0x8080808080808080)
		b = b[8:]
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			n++
		}
	}
	return n
}

// isASCII reports whether no value had a byte above 0x7F.
func (e utf8Evidence) isASCII() bool { return e.valid == 0 && e.broken == 0 }

// isUTF8 reports whether the feed's bytes show UTF-8.
func (e utf8Evidence) isUTF8() bool { return e.valid > 0 && e.valid > e.broken }

// multiByte counts the bytes of b in valid multi-byte sequences and the
// bytes that are not UTF-8.
func multiByte[T string | []byte](b T) (valid, broken int) {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		var r rune
		var n int
		switch s := any(b).(type) {
		case string:
			r, n = utf8.DecodeRuneInString(s[i:])
		case []byte:
			r, n = utf8.DecodeRune(s[i:])
		}
		if r == utf8.RuneError && n == 1 {
			broken++
		} else {
			valid += n
		}
		i += n
	}
	return valid, broken
}

// textCharset makes the feed's text values valid UTF-8 (Google's API
// refuses anything else), deciding their charset by evidence:
//
//   - A feed whose bytes show UTF-8 (utf8Evidence) is UTF-8, whatever the
//     response declared (servers often declare ISO-8859-1 by default): a
//     value with valid multi-byte sequences keeps them and only its broken
//     bytes become U+FFFD. A value of that feed with no valid sequence at
//     all and bytes that are not UTF-8 is one pasted in from elsewhere:
//     it is read as the fallback charset below.
//   - Otherwise the declared single-byte charset decodes every value
//     that is not ASCII; lacking one, bytes that are not UTF-8 are what
//     Lotus Notes, older Outlook and many holiday exports write without a
//     charset, Windows-1252 (a superset of Latin-1): each such byte is
//     decoded as Windows-1252 and the valid UTF-8 around it kept, so every
//     byte is a character and the same bytes give the same text on every
//     fetch.
//
// Valid UTF-8 (nearly every value) costs only the check.
type textCharset struct {
	utf8 bool
	// ascii: no value of the feed has a byte above 0x7F, so every one is
	// its own text.
	ascii    bool
	fallback *charmap.Charmap // the declared single-byte charset, or nil
}

func (c *textCharset) text(s string) string {
	if c == nil {
		return validText(s)
	}
	if c.ascii {
		return s
	}
	if c.fallback != nil && !c.utf8 {
		if !isASCII(s) {
			s = c.decode(s)
		}
		return s
	}
	if utf8.ValidString(s) {
		return s
	}
	if c.utf8 {
		if v, _ := multiByte(s); v > 0 {
			return strings.ToValidUTF8(s, "\uFFFD")
		}
	}
	if c.fallback == nil {
		// No charset declared: the bytes that are not UTF-8 are
		// Windows-1252, the valid UTF-8 around them kept.
		return validText(s)
	}
	return c.decode(s)
}

// decode reads s in the fallback charset: the declared one, or
// Windows-1252 (whose five undefined bytes keep their C1 code points).
func (c *textCharset) decode(s string) string {
	if c.fallback == nil || c.fallback == charmap.Windows1252 {
		return windows1252(s)
	}
	s, _ = c.fallback.NewDecoder().String(s)
	return s
}

// windows1252 decodes s as Windows-1252, every byte a character.
func windows1252(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < utf8.RuneSelf:
			b.WriteByte(c)
		case c < 0xA0:
			b.WriteRune(cp1252[c-0x80])
		default:
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// cp1252 maps Windows-1252's bytes 0x80–0x9F; the five it leaves
// undefined keep their C1 code points (as WHATWG decodes them), so no byte
// of the feed becomes U+FFFD.
var cp1252 = [32]rune{
	'\u20AC', '\u0081', '\u201A', '\u0192', '\u201E', '\u2026', '\u2020', '\u2021',
	'\u02C6', '\u2030', '\u0160', '\u2039', '\u0152', '\u008D', '\u017D', '\u008F',
	'\u0090', '\u2018', '\u2019', '\u201C', '\u201D', '\u2022', '\u2013', '\u2014',
	'\u02DC', '\u2122', '\u0161', '\u203A', '\u0153', '\u009D', '\u017E', '\u0178',
}

// validText makes text valid UTF-8 with no evidence about the feed: each
// byte that is not UTF-8 is decoded as Windows-1252 and the valid UTF-8
// around it kept (see textCharset).
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || n > 1 {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		if c < 0xA0 {
			b.WriteRune(cp1252[c-0x80])
		} else {
			b.WriteRune(rune(c))
		}
		i++
	}
	return b.String()
}
