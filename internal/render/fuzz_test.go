package render_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/printable"
	"github.com/calsyncd/calsyncd/internal/render"
)

// plain reports whether s is text cleaning leaves alone in a one-line
// field: valid UTF-8, no control or bidirectional control character, no
// line separator, within MaxSummary.
func plain(s string) bool {
	if !utf8.ValidString(s) || units(s) > render.MaxSummary {
		return false
	}
	for _, r := range s {
		if printable.Control(r) || printable.BidiControl(r) || r == 0x2028 || r == 0x2029 {
			return false
		}
	}
	return true
}

// FuzzParseTitle: any template either is refused with an error or expands
// for any event; the title is valid UTF-8 without control characters and
// within MaxSummary; one without braces that needs no cleaning is its own
// text.
func FuzzParseTitle(f *testing.F) {
	for _, s := range []string{"[Team] {summary}", "{{x}} {location}", "{summary", "}{", "{categories}{calendar_name}{subscription}", "{ summary }", "",
		"\x1b[31m{summary}\x07", "\u202e{summary}", strings.Repeat("{summary}", 300)} {
		f.Add(s, "Planning")
	}
	f.Add("{summary}", strings.Repeat("🎂", 600))
	f.Fuzz(func(t *testing.T, template, summary string) {
		title, err := render.ParseTitle(template)
		if err != nil {
			return
		}
		ev := event("a", summary, categories("x", "y"))
		res := mustRender(t, []feed.Event{ev}, &render.Policy{Title: title}, render.Context{Subscription: "s", CalendarName: "c"})
		if len(res.Events) != 1 {
			t.Fatalf("%q: %d events", template, len(res.Events))
		}
		checkShown(t, res.Events[0])
		if !strings.ContainsAny(template, "{}") && plain(template) && res.Events[0].Summary != strings.TrimSpace(template) {
			t.Fatalf("%q expanded to %q", template, res.Events[0].Summary)
		}
	})
}

// FuzzShownText: whatever text a feed gives, what Google is shown is
// valid UTF-8, without control characters (but the description's line
// feeds and tabs) or bidirectional controls, within the caps, and
// rendering it again changes nothing; text that needs no cleaning is
// left as it is.
func FuzzShownText(f *testing.F) {
	f.Add("Planning", "Agenda:\n\t1. x", "Room 4", "https://x.example/a")
	f.Add("\x1b[31mx\x07", "a\r\nb\rc\u2028d", "\u202ex\u2066", "https://x.example/\u202e")
	f.Add(strings.Repeat("é", 1100), strings.Repeat("🎂", 4100), strings.Repeat("a\x00", 600), strings.Repeat("u", 3000))
	f.Add("a\xffb\xc3", "\xe2\x80", "\u0085\u009b", "")
	f.Fuzz(func(t *testing.T, summary, desc, loc, url string) {
		ev := event("a", summary, func(ev *feed.Event) { ev.Description, ev.Location, ev.URL = desc, loc, url })
		for _, p := range []*render.Policy{nil, {ColorID: "2"}} {
			got := mustRender(t, []feed.Event{ev}, p, render.Context{}).Events[0]
			checkShown(t, got)
			again := mustRender(t, []feed.Event{got}, p, render.Context{}).Events[0]
			if again.Summary != got.Summary || again.Description != got.Description || again.Location != got.Location || again.URL != got.URL {
				t.Fatalf("rendering twice changed %q to %q", got.Summary, again.Summary)
			}
			if plain(summary) && got.Summary != summary {
				t.Fatalf("plain summary %q became %q", summary, got.Summary)
			}
		}
	})
}
