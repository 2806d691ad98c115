package render_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/render"
)

// tickClock is a clock that moves step at every reading: each match of a
// filter "takes" step.
func tickClock(step time.Duration) func() time.Time {
	t := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(step); return t }
}

func TestTheFilterBudgetStopsARenderAndNamesTheCostliestFilter(t *testing.T) {
	evs := make([]feed.Event, 100)
	for i := range evs {
		evs[i] = feed.Event{UID: string(rune('a'+i%26)) + strings.Repeat("x", i), Summary: "Standup", Description: "notes"}
	}
	cheap, err := render.NewRule(false, "summary", "Standup")
	if err != nil {
		t.Fatal(err)
	}
	costly, err := render.NewRule(true, "description", `[\p{L}\p{N}]{1000}Z`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		budget time.Duration
		fail   bool
	}{
		{"within", time.Hour, false},
		{"past", 10 * time.Second, true},
		{"default budget", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each reading moves 1s: a match "takes" 1s, two rules per event.
			p := &render.Policy{Filters: []render.Rule{cheap, costly}}
			calls := 0
			clock := tickClock(time.Second)
			counting := func() time.Time { calls++; return clock() }
			res, err := render.Render(evs, p, render.Context{FilterBudget: tc.budget, Clock: counting})
			var be *render.FilterBudgetError
			if !tc.fail {
				if err != nil || len(res.Events) != 100 {
					t.Fatalf("within the budget: %d events, %v", len(res.Events), err)
				}
				return
			}
			if !errors.As(err, &be) {
				t.Fatalf("err = %v, want a FilterBudgetError", err)
			}
			budget := tc.budget
			if budget == 0 {
				budget = render.DefaultFilterBudget
			}
			if be.Budget != budget || be.Total <= budget || be.Total > budget+2*time.Second {
				t.Errorf("budget %s, total %s: want it stopped within one event of %s", be.Budget, be.Total, budget)
			}
			if be.Done == 0 || be.Done >= 100 || be.Events != 100 {
				t.Errorf("stopped after %d of %d events", be.Done, be.Events)
			}
			if len(res.Events) != 0 {
				t.Errorf("a failed render returned %d events", len(res.Events))
			}
			if msg := err.Error(); !strings.Contains(msg, "filters[") || !strings.Contains(msg, "limits.filter_time") {
				t.Errorf("message: %s", msg)
			}
		})
	}
}

// TestAFilterReadsTheStartOfALongValue: a pattern is matched against
// the first MaxFilterText bytes of a field, whatever its length, cut at
// a character.
func TestAFilterReadsTheStartOfALongValue(t *testing.T) {
	head := strings.Repeat("é", render.MaxFilterText/2-1) + "x" // MaxFilterText-1 bytes
	for _, tc := range []struct {
		name, desc, pattern string
		excluded            bool
	}{
		{"match inside", head + "tail", `x$`, false},
		{"word within", "KEEP " + strings.Repeat("a", 2*render.MaxFilterText), `^KEEP`, true},
		{"word past the cap", strings.Repeat("a", render.MaxFilterText) + "SECRET", `SECRET`, false},
		{"cut at a character", strings.Repeat("a", render.MaxFilterText-1) + "é", `\x{FFFD}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := render.NewRule(true, "description", tc.pattern)
			if err != nil {
				t.Fatal(err)
			}
			res := mustRender(t, []feed.Event{{UID: "u", Summary: "s", Description: tc.desc}}, &render.Policy{Filters: []render.Rule{r}}, render.Context{})
			if got := len(res.Excluded) == 1; got != tc.excluded {
				t.Errorf("excluded = %v, want %v", got, tc.excluded)
			}
		})
	}
}
