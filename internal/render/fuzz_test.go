package render_test

import (
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/render"
)

// FuzzParseTitle: any template either is refused with an error or expands
// for any event; one without braces is its own text.
func FuzzParseTitle(f *testing.F) {
	for _, s := range []string{"[Team] {summary}", "{{x}} {location}", "{summary", "}{", "{categories}{calendar_name}{subscription}", "{ summary }", ""} {
		f.Add(s, "Planning")
	}
	f.Fuzz(func(t *testing.T, template, summary string) {
		title, err := render.ParseTitle(template)
		if err != nil {
			return
		}
		ev := event("a", summary, categories("x", "y"))
		res := render.Render([]feed.Event{ev}, &render.Policy{Title: title}, render.Context{Subscription: "s", CalendarName: "c"})
		if len(res.Events) != 1 {
			t.Fatalf("%q: %d events", template, len(res.Events))
		}
		if !strings.ContainsAny(template, "{}") && res.Events[0].Summary != strings.TrimSpace(template) {
			t.Fatalf("%q expanded to %q", template, res.Events[0].Summary)
		}
	})
}
