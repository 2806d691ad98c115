package diff

import (
	"fmt"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// DeletePolicy is when the mass-delete guard holds a plan's deletes: a plan
// deleting more than MaxFraction and more than MinDeletes of what is
// mapped, one that leaves the feed with less than 1-MaxFraction of its
// high-water mark (the most events mapped over the recent period), or a
// feed with no events while events are mapped, until the condition has
// held for ConfirmRuns runs in a row.
type DeletePolicy struct {
	MinDeletes  int
	MaxFraction float64
	ConfirmRuns int
}

// Limits bound what one feed may cost per run; zero is no limit.
type Limits struct {
	// MaxEvents bounds the feed's events within the window, as parsed.
	MaxEvents int
	// MaxExpanded bounds the occurrences written as single events (series
	// Google cannot hold as recurring, such as FREQ=SECONDLY).
	MaxExpanded int
}

// LimitError is a feed over one of its limits. The run is refused whole:
// nothing is written and nothing deleted, rather than a truncated mirror
// that would delete whatever fell past the cut.
type LimitError struct {
	// What is counted ("events", "occurrences written as single events"),
	// Key the configuration key that sets the limit.
	What, Key string
	Got, Max  int
	// AtLeast: counting stopped past the limit; the feed has Got or more.
	AtLeast bool
}

func (e *LimitError) Error() string {
	const tail = "; nothing was written or deleted: raise the limit if the feed is genuine"
	if e.AtLeast {
		return fmt.Sprintf("diff: the feed has more than %d %s (%s)%s", e.Max, e.What, e.Key, tail)
	}
	return fmt.Sprintf("diff: the feed has %d %s, more than %s (%d)%s", e.Got, e.What, e.Key, e.Max, tail)
}

// ErrorClass implements calsyncd.Classed.
func (e *LimitError) ErrorClass() calsyncd.ErrorClass { return calsyncd.ClassFeedOverLimit }

// check reports the first limit the feed is over; cut says the
// expansion stopped counting past its limit.
func (l Limits) check(events, expanded int, cut bool) *LimitError {
	switch {
	case l.MaxEvents > 0 && events > l.MaxEvents:
		return &LimitError{What: "events", Key: "limits.max_events", Got: events, Max: l.MaxEvents}
	case l.MaxExpanded > 0 && (expanded > l.MaxExpanded || cut):
		return &LimitError{What: "occurrences written as single events", Key: "limits.max_instances_expanded", Got: expanded, Max: l.MaxExpanded, AtLeast: cut}
	}
	return nil
}

// GuardInput is what the guard weighs a plan against.
type GuardInput struct {
	// Events is how many events the feed offers (as shaped); Mapped how
	// many mappings the plan was made against.
	Events, Mapped int
	// Peak is the high-water mark of mappings over the recent period
	// (NextPeak; 0: none): a feed that shrinks a little every run is held
	// once it has lost most of its peak, not only of its last run.
	Peak int
	// FeedEvents is how many events the feed has within the window, as
	// parsed; Expanded how many occurrences shape wrote as single events,
	// and ExpansionCut whether it stopped counting (Shaped.ExpansionCut).
	FeedEvents, Expanded int
	ExpansionCut         bool
	Limits               Limits
	// Runs is how many runs in a row the guard held deletes before this one.
	Runs int
	// Allow releases held deletes (the operator's --allow-deletes).
	Allow  bool
	Policy DeletePolicy
}

// Verdict is what the guard decided.
type Verdict struct {
	// Refused: the feed is over a limit; the plan let through is empty.
	Refused *LimitError
	// Suspicious: the plan looks like a broken feed rather than a change.
	Suspicious bool
	// ByPeak: it is suspicious against the high-water mark only (the last
	// run alone would have let it through).
	ByPeak bool
	// Runs is the new count of runs in a row whose deletes were held.
	Runs int
	// Held deletes were taken out of the plan; Released were let through
	// although suspicious (confirmed over Runs, or allowed by the operator).
	Held, Released int
	Allowed        bool
}

// Guard is every limit a plan must pass before anything is written, and
// returns the plan it lets through: a feed over its cost limits writes
// nothing; deletes that look like a broken feed rather than a change are
// held.
func Guard(p Plan, in GuardInput) (Plan, Verdict) {
	if err := in.Limits.check(in.FeedEvents, in.Expanded, in.ExpansionCut); err != nil {
		return Plan{Unchanged: p.Unchanged, StillRejected: p.StillRejected}, Verdict{Refused: err}
	}
	g := in.Policy
	n := len(p.Deletes)
	many := n > g.MinDeletes
	suspicious := in.Mapped > 0 && (in.Events == 0 || many && float64(n) > g.MaxFraction*float64(in.Mapped))
	byPeak := !suspicious && in.Peak > 0 && many && float64(in.Peak-in.Events) > g.MaxFraction*float64(in.Peak)
	if !suspicious && !byPeak {
		return p, Verdict{}
	}
	v := Verdict{Suspicious: true, ByPeak: byPeak, Runs: in.Runs + 1, Allowed: in.Allow}
	if in.Allow || v.Runs >= g.ConfirmRuns {
		v.Runs, v.Released = 0, n
		return p, v
	}
	v.Held = n
	p.Deletes = nil
	return p, v
}

// Follow applies the verdict to another plan of the same run (the series
// Google refused, shaped again): deletes held once stay held.
func (v Verdict) Follow(p Plan) (Plan, Verdict) {
	if v.Held > 0 {
		v.Held += len(p.Deletes)
		p.Deletes = nil
	}
	return p, v
}

// NextPeak folds the mappings a run starts from into the high-water mark
// (peak, last reached at `at`): a count at or above the mark is the new
// mark; a mark not reached for longer than period gives way to the
// count. A zero period keeps no mark (the guard weighs the last run only).
func NextPeak(peak int, at time.Time, mapped int, now time.Time, period time.Duration) (int, time.Time) {
	switch {
	case period <= 0:
		return 0, time.Time{}
	case mapped >= peak || now.Sub(at) > period:
		return mapped, now
	}
	return peak, at
}
