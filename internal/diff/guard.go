package diff

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
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
	// Runs is how many runs in a row the guard held these same deletes
	// before this one (Held names them); Base is how many mappings there
	// were when the hold began. While deletes are held the guard weighs
	// them against Base, not against a count the held run's own creates
	// inflated: a feed replaced whole (every UID new) is held until it is
	// confirmed, not let through on its second run.
	Runs, Base int
	Held       string
	// ByConfig: the deletes follow a change of the subscription's
	// configuration (a filter, the window, the time zone) rather than of
	// the feed: waiting never confirms them, only the operator does.
	ByConfig bool
	// Adopted says whether a mapping was adopted in this run (found in
	// Google by reconcile, never written or mapped by this database). A
	// run never deletes what it adopted: those deletes are held until the
	// operator allows them, whatever the counts.
	Adopted func(calsyncd.Key) bool
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
	// ByConfig: the held deletes follow a change of the configuration
	// and wait for the operator (GuardInput.ByConfig).
	ByConfig bool
	// Runs is the new count of runs in a row that held these deletes;
	// Base the mappings the hold began with, and Digest names the held
	// deletes (the next run's GuardInput.Held).
	Runs, Base int
	Digest     string
	// Held deletes were taken out of the plan; Released were let through
	// although suspicious (confirmed over Runs, or allowed by the
	// operator). Adopted of the held are events this run adopted.
	Held, Released, Adopted int
	Allowed                 bool
}

// Guard is every limit a plan must pass before anything is written, and
// returns the plan it lets through: a feed over its cost limits writes
// nothing; deletes that look like a broken feed rather than a change are
// held.
//
// A plan is suspicious when it deletes more than MinDeletes and more than
// MaxFraction of what was mapped (of what was mapped when the hold began,
// while one lasts), when the feed is empty while events are mapped, or
// when the feed has lost more than MinDeletes and more than MaxFraction of
// its high-water mark, however little it lost in this run. Suspicious
// deletes are held until the same deletes were asked for ConfirmRuns runs
// in a row: deletes first seen in a later run start the count again, so a
// release never takes along losses that were never held. Deletes that
// follow a change of the configuration, or of events adopted in this run,
// are never released by waiting.
func Guard(p Plan, in GuardInput) (Plan, Verdict) {
	if err := in.Limits.check(in.FeedEvents, in.Expanded, in.ExpansionCut); err != nil {
		return Plan{Unchanged: p.Unchanged, StillRejected: p.StillRejected}, Verdict{Refused: err}
	}
	var adopted []Op
	if in.Adopted != nil {
		kept := p.Deletes[:0:0]
		for _, op := range p.Deletes {
			if !op.Forget && in.Adopted(op.Key) {
				adopted = append(adopted, op)
			} else {
				kept = append(kept, op)
			}
		}
		p.Deletes = kept
	}
	v := weigh(p.Deletes, in)
	if in.Allow {
		if v.Suspicious || len(adopted) > 0 {
			p.Deletes = append(p.Deletes, adopted...)
			v = Verdict{Suspicious: v.Suspicious, ByPeak: v.ByPeak, Released: len(p.Deletes), Allowed: true}
		}
		return p, v
	}
	if v.Held > 0 {
		p.Deletes = nil
	}
	v.Adopted, v.Held = len(adopted), v.Held+len(adopted)
	return p, v
}

// weigh is the guard's verdict on a plan's deletes.
func weigh(deletes []Op, in GuardInput) Verdict {
	g, n := in.Policy, len(deletes)
	if n == 0 {
		return Verdict{}
	}
	base := in.Mapped
	if in.Runs > 0 && in.Base > 0 {
		base = in.Base
	}
	frac := func(k, of int) bool { return k > g.MinDeletes && float64(k) > g.MaxFraction*float64(of) }
	suspicious := base > 0 && (in.Events == 0 || frac(n, base))
	byPeak := !suspicious && in.Peak > 0 && frac(in.Peak-in.Events, in.Peak)
	if !suspicious && !byPeak {
		return Verdict{}
	}
	v := Verdict{Suspicious: true, ByPeak: byPeak, ByConfig: in.ByConfig, Runs: 1, Base: base, Digest: Digest(deletes)}
	if in.Runs > 0 && in.Held == v.Digest {
		v.Runs = in.Runs + 1
	}
	if !in.ByConfig && v.Runs >= g.ConfirmRuns {
		return Verdict{Suspicious: true, ByPeak: byPeak, Released: n}
	}
	v.Held = n
	return v
}

// Digest names a set of deletes, whatever their order.
func Digest(deletes []Op) string {
	keys := make([]string, len(deletes))
	for i, op := range deletes {
		keys[i] = op.Key.String()
	}
	slices.Sort(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
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
