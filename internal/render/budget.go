package render

import (
	"fmt"
	"regexp/syntax"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// DefaultFilterBudget is how long one render may spend matching filters
// when its Context names no budget (limits.filter_time).
const DefaultFilterBudget = 10 * time.Second

// MaxFilterText is how much of a field a filter reads: a pattern is
// matched against the first MaxFilterText bytes, which bounds the cost of
// one match (RE2 is linear, but in the text times the pattern's size).
const MaxFilterText = 64 << 10

// FilterBudgetError is a render that spent its budget matching filters:
// a pattern too costly for the feed's text (a counted repetition such as
// [\p{L}]{1000} is matched at every character). It names the filter that
// spent the most; nothing of the pass is written or deleted.
type FilterBudgetError struct {
	// Filter is the rule's index in the policy's filters, Rule the rule.
	Filter int
	Rule   Rule
	// Spent is the time that rule took, Total every rule's, Budget the
	// limit.
	Spent, Total, Budget time.Duration
	// Done of Events had been decided when the budget ran out.
	Done, Events int
}

func (e *FilterBudgetError) Error() string {
	kind := "include"
	if e.Rule.Exclude {
		kind = "exclude"
	}
	return fmt.Sprintf("filters[%d] (%s.%s) took %s of the %s a pass may spend matching filters (limits.filter_time), with %d of %d events decided: simplify its pattern — a counted repetition such as {1000} is matched at every character of every event",
		e.Filter, kind, e.Rule.Field, e.Spent.Round(time.Millisecond), e.Budget, e.Done, e.Events)
}

// ErrorClass implements calsyncd.Classed: a cost limit of the
// subscription, like a feed with too many events.
func (e *FilterBudgetError) ErrorClass() calsyncd.ErrorClass { return calsyncd.ClassFeedOverLimit }

// meter times the filters of one render against its budget.
type meter struct {
	now    func() time.Time
	budget time.Duration
	spent  []time.Duration
	total  time.Duration
}

func newMeter(p *Policy, c Context) *meter {
	m := &meter{now: c.Clock, budget: c.FilterBudget, spent: make([]time.Duration, len(p.Filters))}
	if m.now == nil {
		m.now = time.Now
	}
	if m.budget <= 0 {
		m.budget = DefaultFilterBudget
	}
	return m
}

// match runs rule i on ev and counts its time.
func (m *meter) match(p *Policy, i int, ev *feed.Event) bool {
	start := m.now()
	ok := p.Filters[i].matches(ev)
	d := m.now().Sub(start)
	m.spent[i] += d
	m.total += d
	return ok
}

// over is the error of a spent budget, nil while within it.
func (m *meter) over(p *Policy, done, events int) error {
	if m.total <= m.budget {
		return nil
	}
	worst := 0
	for i, d := range m.spent {
		if d > m.spent[worst] {
			worst = i
		}
	}
	return &FilterBudgetError{Filter: worst, Rule: p.Filters[worst], Spent: m.spent[worst], Total: m.total,
		Budget: m.budget, Done: done, Events: events}
}

// CostlySteps is the size of a compiled pattern (instructions) past which
// validate warns: RE2 runs it at every character of the text, so its cost
// is the text's length times this.
const CostlySteps = 300

// PatternSteps is the number of instructions pattern compiles to (0 when
// it does not compile).
func PatternSteps(pattern string) int {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0
	}
	return len(prog.Inst)
}
