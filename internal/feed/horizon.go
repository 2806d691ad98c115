package feed

import "time"

// The window moves with Now, but what a parse leaves out for lying beyond
// it stays left out until the feed is parsed again: a feed that never
// changes would never show it. A parse therefore says when parsing the
// same body would give more (Calendar.RereadAt), and a caller that keeps
// a feed's validators reads it in full again by then.

// noteReread records that parsing the same body at at or later gives
// occurrences this parse left out; the earliest such time is kept.
func (p *parser) noteReread(at time.Time) {
	if c := p.cal; c.RereadAt.IsZero() || at.Before(c.RereadAt) {
		c.RereadAt = at
	}
}

// extraRulesHorizon is the Now at which extraRules, run again, writes
// RDATEs this parse did not: when the window's end (now+future) reaches
// hi, the year after is expanded; when its start enters a new year (lo),
// the count cap makes room further ahead.
func extraRulesHorizon(hi, lo time.Time, past, future time.Duration) time.Time {
	at := hi.Add(-future)
	if past > 0 {
		at = earliest(at, time.Date(lo.Year()+1, 1, 1, 0, 0, 0, 0, time.UTC).Add(past))
	}
	return at
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
