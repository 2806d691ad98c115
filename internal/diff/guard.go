package diff

// DeletePolicy is when the mass-delete guard holds a plan's deletes: a plan
// deleting more than MaxFraction and more than MinDeletes of what is
// mapped, or a feed with no events while events are mapped, until the
// condition has held for ConfirmRuns runs in a row.
type DeletePolicy struct {
	MinDeletes  int
	MaxFraction float64
	ConfirmRuns int
}

// GuardInput is what the guard weighs a plan against.
type GuardInput struct {
	// Events is how many events the feed offers (as shaped); Mapped how
	// many mappings the plan was made against.
	Events, Mapped int
	// Runs is how many runs in a row the guard held deletes before this one.
	Runs int
	// Allow releases held deletes (the operator's --allow-deletes).
	Allow  bool
	Policy DeletePolicy
}

// Verdict is what the guard decided.
type Verdict struct {
	// Suspicious: the plan looks like a broken feed rather than a change.
	Suspicious bool
	// Runs is the new count of runs in a row whose deletes were held.
	Runs int
	// Held deletes were taken out of the plan; Released were let through
	// although suspicious (confirmed over Runs, or allowed by the operator).
	Held, Released int
	Allowed        bool
}

// Guard holds deletes that look like a broken feed rather than a change,
// and returns the plan it lets through. It is the place for every limit a
// plan must pass before anything is written (cost limits on events and
// expanded instances, a high-water-mark delete guard).
func Guard(p Plan, in GuardInput) (Plan, Verdict) {
	g := in.Policy
	n := len(p.Deletes)
	suspicious := in.Mapped > 0 && (in.Events == 0 || (n > g.MinDeletes && float64(n) > g.MaxFraction*float64(in.Mapped)))
	if !suspicious {
		return p, Verdict{}
	}
	v := Verdict{Suspicious: true, Runs: in.Runs + 1, Allowed: in.Allow}
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
