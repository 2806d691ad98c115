package feed

import (
	"testing"

	ical "github.com/arran4/golang-ical"
)

// TestParamReadsRFC6868 reads RFC 6868's caret escapes in parameter
// values.
func TestParamReadsRFC6868(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{"Europe/Berlin", "Europe/Berlin"},
		{"A^nB^n", "A\nB"}, // the trailing newline is space to TrimSpace
		{"^'Quoted^' name", `"Quoted" name`},
		{"a^^b", "a^b"},
		{"a^^nb", "a^nb"},
		{"caret ^x and ^", "caret ^x and ^"},
	} {
		pr := &ical.IANAProperty{BaseProperty: ical.BaseProperty{IANAToken: "DTSTART", ICalParameters: map[string][]string{"X-P": {tt.raw}}}}
		if got := param(pr, "X-P"); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.raw, got, tt.want)
		}
	}
}
