package feed

import (
	"time"

	"github.com/teambition/rrule-go"
)

// maxExpansion bounds the instances examined for one series: past it the
// series is kept, which errs towards mirroring too much, never too little.
const maxExpansion = 100000

// window drops events outside [Now-WindowPast, Now+WindowFuture]. A master
// stays while any instance, or any of its overrides, falls inside; an
// override stays with its master (Google cannot hold an instance without
// one), and an orphan override when it falls inside itself.
func (p *parser) window(events []Event) []Event {
	now := p.opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	var lo, hi time.Time
	if p.opts.WindowPast > 0 {
		lo = now.Add(-p.opts.WindowPast)
	}
	if p.opts.WindowFuture > 0 {
		hi = now.Add(p.opts.WindowFuture)
	}
	overlaps := func(start, end time.Time) bool {
		if !lo.IsZero() && !end.After(lo) && !(end.Equal(start) && !start.Before(lo)) {
			return false
		}
		return hi.IsZero() || start.Before(hi)
	}
	keepMaster := map[string]bool{}
	hasMaster := map[string]bool{}
	// empty are the series without a single occurrence (every one
	// excluded): they are not outside the window, they are gone, and what
	// Google holds of them is deleted like any event that left the feed.
	var empty map[string]bool
	for i := range events {
		ev := &events[i]
		if ev.RecurrenceID != "" {
			continue
		}
		hasMaster[ev.UID] = true
		if ev.IsRecurring() {
			keepMaster[ev.UID] = seriesOverlaps(ev, lo, hi)
			if !keepMaster[ev.UID] && (!lo.IsZero() || !hi.IsZero()) && !seriesOverlaps(ev, time.Time{}, time.Time{}) {
				if empty == nil {
					empty = map[string]bool{}
				}
				empty[ev.UID] = true
			}
		} else {
			keepMaster[ev.UID] = overlaps(ev.Start.T, ev.End.T)
		}
	}
	// An override moved into the window keeps its master; one that is
	// not cancelled is an occurrence of its own.
	for i := range events {
		ev := &events[i]
		if ev.RecurrenceID != "" && hasMaster[ev.UID] && overlaps(ev.Start.T, ev.End.T) {
			keepMaster[ev.UID] = true
		}
		if ev.RecurrenceID != "" && ev.Status != StatusCancelled {
			delete(empty, ev.UID)
		}
	}
	out := events[:0]
	for i := range events {
		ev := &events[i]
		keep := keepMaster[ev.UID]
		if ev.RecurrenceID != "" && !hasMaster[ev.UID] {
			keep = overlaps(ev.Start.T, ev.End.T)
		}
		if keep {
			out = append(out, *ev)
		} else if empty[ev.UID] {
			continue
		} else {
			p.cal.OutsideWindow++
			p.cal.Outside = append(p.cal.Outside, ev.Key())
			if !hi.IsZero() && !ev.Start.T.Before(hi) {
				// It enters the window as the window moves.
				p.noteReread(ev.Start.T.Add(-p.opts.WindowFuture))
			}
		}
	}
	return out
}

// seriesOverlaps reports whether any instance of a recurring master
// overlaps [lo, hi) (zero bounds are open).
func seriesOverlaps(ev *Event, lo, hi time.Time) bool {
	s := ev.Series
	if s == nil {
		return true
	}
	length := ev.End.T.Sub(ev.Start.T)
	from := lo
	if !from.IsZero() {
		from = from.Add(-length)
	}
	in := func(t time.Time) bool {
		if !from.IsZero() && !t.After(from) && !(length == 0 && t.Equal(from)) {
			return false
		}
		return hi.IsZero() || t.Before(hi)
	}
	excluded := func(t time.Time) bool {
		for _, x := range s.exdates {
			if x.Equal(t) {
				return true
			}
		}
		return false
	}
	for _, t := range s.rdates {
		if in(t) && !excluded(t) {
			return true
		}
	}
	rule, err := s.ruleOptions()
	if err != nil {
		return true
	}
	if rule == nil {
		return in(ev.Start.T) && !excluded(ev.Start.T)
	}
	opt := *rule
	if !hi.IsZero() && !ev.Start.T.Before(hi) {
		return false
	}
	if !opt.Until.IsZero() && !from.IsZero() && opt.Until.Before(from) {
		return false
	}
	if opt.Count == 0 && opt.Until.IsZero() && hi.IsZero() {
		return true // endless, and the window is open towards the future
	}
	if opt.Freq == rrule.HOURLY || opt.Freq == rrule.MINUTELY || opt.Freq == rrule.SECONDLY {
		return true // too dense to walk; keep it
	}
	r, err := rrule.NewRRule(opt)
	if err != nil {
		return true
	}
	next := r.Iterator()
	for n := 0; n < maxExpansion; n++ {
		t, ok := next()
		if !ok {
			return false
		}
		if !hi.IsZero() && !t.Before(hi) {
			return false
		}
		if in(t) && !excluded(t) {
			return true
		}
	}
	return true
}
