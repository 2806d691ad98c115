package printable_test

import (
	"fmt"
	"testing"

	"github.com/calsyncd/calsyncd/internal/printable"
)

func TestString(t *testing.T) {
	tests := map[string]struct{ in, want, lines string }{
		"plain":            {in: "502 Bad Gateway", want: "502 Bad Gateway", lines: "502 Bad Gateway"},
		"unicode stays":    {in: "Geburtstag – Jürgen 🎂", want: "Geburtstag – Jürgen 🎂", lines: "Geburtstag – Jürgen 🎂"},
		"ansi colour":      {in: "500 \x1b[31mred\x1b[0m", want: `500 \x1b[31mred\x1b[0m`, lines: `500 \x1b[31mred\x1b[0m`},
		"carriage return":  {in: "500 oops\rOK", want: `500 oops\rOK`, lines: `500 oops\rOK`},
		"line feed":        {in: "a\nb", want: `a\nb`, lines: "a\nb"},
		"tab":              {in: "a\tb", want: `a\tb`, lines: "a\tb"},
		"nul and bell":     {in: "a\x00b\x07", want: `a\x00b\x07`, lines: `a\x00b\x07`},
		"delete":           {in: "a\x7f", want: `a\x7f`, lines: `a\x7f`},
		"c1 csi":           {in: "a\u009b31m", want: `a\u009b31m`, lines: `a\u009b31m`},
		"bidi override":    {in: "evil\u202egnp.exe", want: `evil\u202egnp.exe`, lines: `evil\u202egnp.exe`},
		"bidi isolate":     {in: "\u2066x\u2069", want: `\u2066x\u2069`, lines: `\u2066x\u2069`},
		"line separator":   {in: "a\u2028b", want: `a\u2028b`, lines: `a\u2028b`},
		"invalid utf-8":    {in: "a\xffb\xc3", want: `a\xffb\xc3`, lines: `a\xffb\xc3`},
		"osc title":        {in: "\x1b]0;pwned\x07", want: `\x1b]0;pwned\x07`, lines: `\x1b]0;pwned\x07`},
		"empty":            {in: "", want: "", lines: ""},
		"backslash stays":  {in: `C:\path`, want: `C:\path`, lines: `C:\path`},
		"mixed multi-line": {in: "line 1\n\x1b[2Kline 2", want: `line 1\n\x1b[2Kline 2`, lines: "line 1\n" + `\x1b[2Kline 2`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := printable.String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := printable.Lines(tt.in); got != tt.lines {
				t.Errorf("Lines(%q) = %q, want %q", tt.in, got, tt.lines)
			}
		})
	}
}

// FuzzString checks that nothing a terminal acts on survives.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "ok", "\x1b[31m", "\r\n", "\u202e", "\xff", "\u009b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{printable.String(s), printable.Lines(s)} {
			for _, r := range out {
				if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x202e || r == 0xfffd && !containsReplacement(s) {
					t.Fatalf("escape(%q) = %q keeps %U", s, out, r)
				}
			}
		}
		for _, r := range printable.String(s) {
			if r == '\n' || r == '\t' {
				t.Fatalf("String(%q) keeps a line feed or tab", s)
			}
		}
	})
}

func containsReplacement(s string) bool {
	for _, r := range s {
		if r == 0xfffd {
			return true
		}
	}
	return false
}

func ExampleString() {
	fmt.Println(printable.String("503 \x1b[32mall good\x1b[0m"))
	// Output: 503 \x1b[32mall good\x1b[0m
}

// TestRuneClasses: Control is C0, DEL and C1; BidiControl the embeddings,
// overrides and isolates, not the marks or ordinary text.
func TestRuneClasses(t *testing.T) {
	for _, tc := range []struct {
		r             rune
		control, bidi bool
	}{
		{0x00, true, false}, {'\t', true, false}, {'\n', true, false}, {0x1b, true, false}, {0x1f, true, false},
		{' ', false, false}, {'~', false, false}, {0x7f, true, false}, {0x80, true, false}, {0x85, true, false},
		{0x9f, true, false}, {0xa0, false, false}, {'é', false, false},
		{0x2029, false, false}, {0x202a, false, true}, {0x202e, false, true}, {0x202f, false, false},
		{0x2065, false, false}, {0x2066, false, true}, {0x2069, false, true}, {0x206a, false, false},
		{0x200e, false, false}, {0x200f, false, false}, {0x061c, false, false}, {0x1f382, false, false},
	} {
		if got := printable.Control(tc.r); got != tc.control {
			t.Errorf("Control(%U) = %v, want %v", tc.r, got, tc.control)
		}
		if got := printable.BidiControl(tc.r); got != tc.bidi {
			t.Errorf("BidiControl(%U) = %v, want %v", tc.r, got, tc.bidi)
		}
	}
}
