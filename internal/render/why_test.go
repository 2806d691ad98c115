package render_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/render"
)

// TestExcludedWhy: each excluded event says which rule left it out — the
// first exclude that matched, or the includes none of which did — and
// saying so changes nothing of what is kept.
func TestExcludedWhy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		filters []render.Rule
		events  []feed.Event
		kept    []string
		why     []string // "uid: explanation", in Excluded's order
	}{
		{
			name:    "an exclude matched",
			filters: []render.Rule{rule(t, false, "summary", "."), rule(t, true, "summary", "^On-call")},
			events:  []feed.Event{event("a", "On-call handover"), event("b", "Planning")},
			kept:    []string{"b"},
			why:     []string{`a: filters[1] exclude.summary matched "^On-call"`},
		},
		{
			name:    "the first exclude that matched is named",
			filters: []render.Rule{rule(t, true, "location", "Room"), rule(t, true, "summary", "On-call")},
			events:  []feed.Event{event("a", "On-call", func(ev *feed.Event) { ev.Location = "Room 2" })},
			why:     []string{`a: filters[0] exclude.location matched "Room"`},
		},
		{
			name:    "no include matched",
			filters: []render.Rule{rule(t, false, "categories", "^DE$"), rule(t, true, "summary", "x"), rule(t, false, "summary", "^Team")},
			events:  []feed.Event{event("a", "Noël", categories("FR")), event("b", "Neujahr", categories("DE")), event("c", "Team sync")},
			kept:    []string{"b", "c"},
			why:     []string{`a: no include matched (filters[0] include.categories "^DE$"; filters[2] include.summary "^Team")`},
		},
		{
			name:    "an override of a kept series that an exclude cancels",
			filters: []render.Rule{rule(t, true, "summary", "cancelled")},
			events:  []feed.Event{event("s", "Sync", series), event("s", "Sync (cancelled)", override("20270118T090000Z"))},
			kept:    []string{"s", "s/20270118T090000Z"},
			why:     []string{`s: filters[0] exclude.summary matched "cancelled"`},
		},
		{
			name:    "a series left out takes its overrides along, counted once",
			filters: []render.Rule{rule(t, false, "summary", "^Keep")},
			events:  []feed.Event{event("s", "Sync", series), event("s", "Keep me", override("20270118T090000Z"))},
			why:     []string{`s: no include matched (filters[0] include.summary "^Keep")`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &render.Policy{Filters: tc.filters}
			res, err := render.Render(tc.events, p, render.Context{})
			if err != nil {
				t.Fatal(err)
			}
			var kept []string
			for _, ev := range res.Events {
				k := ev.UID
				if ev.RecurrenceID != "" {
					k += "/" + ev.RecurrenceID
				}
				kept = append(kept, k)
			}
			if !slices.Equal(kept, tc.kept) {
				t.Errorf("kept %v, want %v", kept, tc.kept)
			}
			if len(res.Why) != len(res.Excluded) {
				t.Fatalf("%d reasons for %d excluded events", len(res.Why), len(res.Excluded))
			}
			var why []string
			for i, ev := range res.Excluded {
				why = append(why, ev.UID+": "+p.Explain(res.Why[i], "filters"))
			}
			if strings.Join(why, "\n") != strings.Join(tc.why, "\n") {
				t.Errorf("why:\n%s\nwant:\n%s", strings.Join(why, "\n"), strings.Join(tc.why, "\n"))
			}
		})
	}
}
