package subscription

import (
	"testing"

	"github.com/calsyncd/calsyncd/internal/feed"
)

func TestWarningKind(t *testing.T) {
	for msg, want := range map[string]string{
		"event 201639 skipped: no DTSTART":                            "event N skipped: no DTSTART",
		`event 5 ("Board \"Q3\" review") skipped: bad DTSTART`:        `event N ("…") skipped: bad DTSTART`,
		`unknown time zone "Mars/Olympus": its times are read as UTC`: `unknown time zone "…": its times are read as UTC`,
		"": "",
	} {
		if got := warningKind(msg); got != want {
			t.Errorf("warningKind(%q) = %q, want %q", msg, got, want)
		}
	}
	k := kindsOf([]feed.Warning{{Message: "event 1 skipped: x"}, {Message: "event 2 skipped: x"}, {Message: "a"}, {Message: "b"}, {Message: "c"}, {Message: "c"}})
	if got, want := k.summary(), "2× event N skipped: x; 2× c; 1× a; and 1 more kinds"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
}
