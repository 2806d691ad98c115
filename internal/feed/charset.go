package feed

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/transform"
)

// decoderFor is the decoder for a charset a response declared, nil when
// the body is to be read as UTF-8 (none declared, UTF-8 or ASCII, or a
// label no one knows: then text that is not UTF-8 falls back to
// Windows-1252 value by value, as without a charset). Labels are read as
// browsers read them (WHATWG): ISO-8859-1 is Windows-1252, its superset.
func decoderFor(charset string) (*encoding.Decoder, error) {
	cs := strings.ToLower(strings.Trim(strings.TrimSpace(charset), `"'`))
	switch cs {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
		return nil, nil
	}
	enc, err := htmlindex.Get(cs)
	if err != nil {
		return nil, fmt.Errorf("unknown charset %q", charset)
	}
	if name, _ := htmlindex.Name(enc); name == "utf-8" {
		return nil, nil
	}
	return enc.NewDecoder(), nil
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

// cp1252 maps Windows-1252's bytes 0x80–0x9F; the five it leaves
// undefined keep their C1 code points (as WHATWG decodes them), so no byte
// of the feed becomes U+FFFD.
var cp1252 = [32]rune{
	'\u20AC', '\u0081', '\u201A', '\u0192', '\u201E', '\u2026', '\u2020', '\u2021',
	'\u02C6', '\u2030', '\u0160', '\u2039', '\u0152', '\u008D', '\u017D', '\u008F',
	'\u0090', '\u2018', '\u2019', '\u201C', '\u201D', '\u2022', '\u2013', '\u2014',
	'\u02DC', '\u2122', '\u0161', '\u203A', '\u0153', '\u009D', '\u017E', '\u0178',
}

// validText makes text valid UTF-8: Google's API refuses anything else.
// Bytes that are not UTF-8 are what Lotus Notes, older Outlook and many
// holiday exports write without a charset: Windows-1252 (a superset of
// Latin-1). Each such byte is decoded as Windows-1252 and the valid UTF-8
// around it kept, so every byte is a character, a value mixing both loses
// nothing, and the same bytes give the same text on every fetch. Valid
// UTF-8 (nearly every value) costs only the check.
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
