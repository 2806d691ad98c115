package feed

import (
	"bytes"

	ical "github.com/arran4/golang-ical"
)

// Parameters: the lexer mends what golang-ical would refuse (fixParams),
// and the scanner reads plain parameters itself (parseFast), leaving the
// rest to golang-ical.

// fixParams checks the parameters and value separator of a content line
// (rest starts after the name, with ';' or ':') and mends what golang-ical
// would reject: a quoted TZID that swallowed the value
// (TZID="W. Europe Standard Time:20200609T090000"), upper-case parameter
// names, stray quotes and control characters in parameter values. It
// returns rest itself when nothing needed mending, and false when the line
// has no value at all.
func fixParams(rest []byte) ([]byte, bool) {
	if rest[0] == ':' {
		return rest, true
	}
	var out []byte // nil until a change is needed
	p := 0
	for p < len(rest) && rest[p] == ';' {
		var named bool
		if p, out, named = fixParamName(rest, p+1, out); !named {
			continue
		}
		var end paramEnd
		p, out, end = fixParamValues(rest, p, out)
		switch end {
		case paramBad:
			return nil, false
		case paramSwallowed:
			return out, true
		}
	}
	if p >= len(rest) || rest[p] != ':' {
		return nil, false
	}
	if out == nil {
		return rest, true
	}
	return append(out, rest[p:]...), true
}

// paramEnd is how a parameter's values end: before the next parameter or
// the value separator, with the line's value swallowed by a quote, or in
// a way golang-ical would reject.
type paramEnd uint8

const (
	paramNext paramEnd = iota
	paramSwallowed
	paramBad
)

// The fixParam functions read rest from p and return where they stopped;
// out is the mended line, nil while nothing needed mending: once a change
// is needed it is started with rest up to the change, and from then on
// every part read is appended to it.

// fixParamName reads the name of the parameter starting at ns (after its
// ';') and the '=' after it, upper-casing the name. named is false for a
// parameter without a value, which is dropped.
func fixParamName(rest []byte, ns int, out []byte) (p int, _ []byte, named bool) {
	p = ns
	for p < len(rest) && rest[p] != '=' && rest[p] != ':' && rest[p] != ';' {
		p++
	}
	pname := rest[ns:p]
	if p >= len(rest) || rest[p] != '=' || len(pname) == 0 {
		if out == nil {
			out = append([]byte(nil), rest[:ns-1]...)
		}
		return p, out, false
	}
	if needsUpper(pname) && out == nil {
		out = append([]byte(nil), rest[:ns]...)
	}
	if out != nil {
		out = append(out, ';')
		out = append(out, upperASCII(pname)...)
		out = append(out, '=')
	}
	return p + 1, out, true
}

// fixParamValues reads a parameter's comma-separated values.
func fixParamValues(rest []byte, p int, out []byte) (int, []byte, paramEnd) {
	for {
		if p < len(rest) && rest[p] == '"' {
			var end paramEnd
			if p, out, end = fixQuotedValue(rest, p, out); end != paramNext {
				return p, out, end
			}
		} else {
			p, out = fixPlainValue(rest, p, out)
		}
		if p >= len(rest) || rest[p] != ',' {
			break
		}
		if out != nil {
			out = append(out, ',')
		}
		p++
	}
	if p < len(rest) && rest[p] != ';' && rest[p] != ':' {
		return p, out, paramBad
	}
	return p, out, paramNext
}

// fixQuotedValue reads a quoted value starting at vs, its control
// characters dropped; a quote that swallowed the line's value
// (TZID="Zone:20200609T090000") is closed before the value's ':'.
func fixQuotedValue(rest []byte, vs int, out []byte) (int, []byte, paramEnd) {
	q := bytes.IndexByte(rest[vs+1:], '"')
	if q < 0 {
		return vs, out, paramBad
	}
	val := rest[vs+1 : vs+1+q]
	p := vs + q + 2
	if p >= len(rest) {
		c := bytes.LastIndexByte(val, ':')
		if c < 0 {
			return p, out, paramBad
		}
		if out == nil {
			out = append([]byte(nil), rest[:vs]...)
		}
		out = append(out, '"')
		out = append(out, cleanParamValue(val[:c])...)
		out = append(out, '"')
		out = append(out, val[c:]...)
		return p, out, paramSwallowed
	}
	if out == nil && hasControl(val) {
		out = append([]byte(nil), rest[:vs]...)
	}
	if out != nil {
		out = append(out, '"')
		out = append(out, cleanParamValue(val)...)
		out = append(out, '"')
	}
	return p, out, paramNext
}

// fixPlainValue reads an unquoted value starting at vs, its control
// characters, stray quotes and backslashes dropped.
func fixPlainValue(rest []byte, vs int, out []byte) (int, []byte) {
	p := vs
	for p < len(rest) && rest[p] != ';' && rest[p] != ':' && rest[p] != ',' {
		p++
	}
	val := rest[vs:p]
	if out == nil && (hasControl(val) || bytes.IndexByte(val, '"') >= 0 || bytes.IndexByte(val, '\\') >= 0) {
		out = append([]byte(nil), rest[:vs]...)
	}
	if out != nil {
		v := cleanParamValue(val)
		v = bytes.ReplaceAll(v, []byte(`"`), nil)
		v = bytes.ReplaceAll(v, []byte(`\`), nil)
		out = append(out, v...)
	}
	return p, out
}

func needsUpper(b []byte) bool {
	for _, c := range b {
		if c >= 'a' && c <= 'z' || c == '_' {
			return true
		}
	}
	return false
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

func cleanParamValue(b []byte) []byte {
	if !hasControl(b) {
		return b
	}
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c < 0x20 && c != '\t' || c == 0x7f {
			continue
		}
		out = append(out, c)
	}
	return out
}

// parseFast splits a line the way ical.ParseProperty does, when its
// parameters are plain: names of letters, digits and '-', values without
// a backslash or control character, quoted or not. ok is false for any
// other line, which golang-ical then reads itself. text reports that the
// value is TEXT and is to be unescaped.
func (t *treeSink) parseFast(name string, rest []byte) (params map[string][]string, value []byte, text, ok bool) {
	colon := 0
	if rest[0] == ';' {
		if colon = paramsEnd(rest); colon < 0 {
			return nil, nil, false, false
		}
		params = t.sharedParams(rest[:colon])
	}
	bp := ical.BaseProperty{IANAToken: name, ICalParameters: params}
	return params, rest[colon+1:], bp.GetValueType() == ical.ValueDataTypeText, true
}

// paramsEnd returns the index of the ':' that ends the plain parameters
// at the start of rest, or -1 when they are not plain.
func paramsEnd(rest []byte) int {
	p := 0
	for p < len(rest) && rest[p] == ';' {
		p++
		ns := p
		for p < len(rest) && isTokenChar(rest[p]) {
			p++
		}
		if p == ns || p >= len(rest) || rest[p] != '=' {
			return -1
		}
		p++
		for {
			if p >= len(rest) {
				return -1
			}
			if rest[p] == '"' {
				p++
				for p < len(rest) && rest[p] != '"' {
					if badParamByte(rest[p]) {
						return -1
					}
					p++
				}
				if p >= len(rest) {
					return -1
				}
				p++
			} else {
				for p < len(rest) && rest[p] != ';' && rest[p] != ':' && rest[p] != ',' {
					if rest[p] == '"' || badParamByte(rest[p]) {
						return -1
					}
					p++
				}
			}
			if p >= len(rest) {
				return -1
			}
			if rest[p] != ',' {
				break
			}
			p++
		}
		if rest[p] != ';' && rest[p] != ':' {
			return -1
		}
	}
	if p >= len(rest) || rest[p] != ':' {
		return -1
	}
	return p
}

func isTokenChar(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
}

// badParamByte is a byte golang-ical reads differently in a parameter
// value (an escape) or refuses (a control character other than tab).
func badParamByte(c byte) bool {
	return c == '\\' || c < 0x20 && c != '\t'
}

// sharedParams returns the parameter map of plain parameter text
// (";TZID=Europe/Berlin"), one map for every property that has the same.
func (t *treeSink) sharedParams(text []byte) map[string][]string {
	if m, ok := t.params[string(text)]; ok {
		return m
	}
	m := map[string][]string{}
	p := 0
	for p < len(text) && text[p] == ';' {
		p++
		eq := p + bytes.IndexByte(text[p:], '=')
		k := string(text[p:eq])
		p = eq + 1
		for {
			var v string
			if p < len(text) && text[p] == '"' {
				q := bytes.IndexByte(text[p+1:], '"')
				v = string(text[p+1 : p+1+q])
				p += q + 2
			} else {
				e := p
				for e < len(text) && text[e] != ';' && text[e] != ',' {
					e++
				}
				v = string(text[p:e])
				p = e
			}
			m[k] = append(m[k], v)
			if p >= len(text) || text[p] != ',' {
				break
			}
			p++
		}
	}
	if len(t.params) < maxSharedParams {
		t.params[string(text)] = m
	}
	return m
}
