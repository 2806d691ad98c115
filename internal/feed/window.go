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
	w := p.windowBounds()
	k := w.keptSeries(events)
	out := events[:0]
	for i := range events {
		ev := &events[i]
		keep := k.master[ev.UID]
		if ev.RecurrenceID != "" && !k.hasMaster[ev.UID] {
			keep = w.overlaps(ev.Start.T, ev.End.T)
		}
		switch {
		case keep:
			out = append(out, *ev)
		case k.empty[ev.UID]:
		default:
			p.cal.OutsideWindow++
			p.cal.Outside = append(p.cal.Outside, ev.Key())
			if !w.hi.IsZero() && !ev.Start.T.Before(w.hi) {
				// It enters the window as the window moves.
				p.noteReread(ev.Start.T.Add(-p.opts.WindowFuture))
			}
		}
	}
	return out
}

// bounds are a window's [lo, hi); a zero bound is open.
type bounds struct{ lo, hi time.Time }

func (p *parser) windowBounds() bounds {
	now := p.opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	var w bounds
	if p.opts.WindowPast > 0 {
		w.lo = now.Add(-p.opts.WindowPast)
	}
	if p.opts.WindowFuture > 0 {
		w.hi = now.Add(p.opts.WindowFuture)
	}
	return w
}

// overlaps says whether [start, end) overlaps the window; an event of no
// length overlaps it at its start.
func (w bounds) overlaps(start, end time.Time) bool {
	if !w.lo.IsZero() && !end.After(w.lo) && !(end.Equal(start) && !start.Before(w.lo)) {
		return false
	}
	return w.hi.IsZero() || start.Before(w.hi)
}

// keptUIDs is which UIDs' masters the window keeps.
type keptUIDs struct {
	master, hasMaster map[string]bool
	// empty are the series without a single occurrence (every one
	// excluded): they are not outside the window, they are gone, and what
	// Google holds of them is deleted like any event that left the feed.
	empty map[string]bool
}

// keptSeries decides which masters the window keeps: those with an
// occurrence inside, and those an override moved into the window.
func (w bounds) keptSeries(events []Event) keptUIDs {
	k := keptUIDs{master: map[string]bool{}, hasMaster: map[string]bool{}}
	for i := range events {
		ev := &events[i]
		if ev.RecurrenceID != "" {
			continue
		}
		k.hasMaster[ev.UID] = true
		if !ev.IsRecurring() {
			k.master[ev.UID] = w.overlaps(ev.Start.T, ev.End.T)
			continue
		}
		k.master[ev.UID] = seriesOverlaps(ev, w.lo, w.hi)
		if !k.master[ev.UID] && (!w.lo.IsZero() || !w.hi.IsZero()) && !seriesOverlaps(ev, time.Time{}, time.Time{}) {
			if k.empty == nil {
				k.empty = map[string]bool{}
			}
			k.empty[ev.UID] = true
		}
	}
	// An override moved into the window keeps its master; one that is
	// not cancelled is an occurrence of its own.
	for i := range events {
		ev := &events[i]
		if ev.RecurrenceID != "" && k.hasMaster[ev.UID] && w.overlaps(ev.Start.T, ev.End.T) {
			k.master[ev.UID] = true
		}
		if ev.RecurrenceID != "" && ev.Status != StatusCancelled {
			delete(k.empty, ev.UID)
		}
	}
	return k
}

// seriesOverlaps reports whether any instance of a recurring master
// overlaps [lo, hi) (zero bounds are open).
func seriesOverlaps(ev *Event, lo, hi time.Time) bool {
	s := ev.Series
	if s == nil {
		return true
	}
	w := occurrenceWindow{hi: hi, length: ev.End.T.Sub(ev.Start.T), exdates: s.exdates}
	if !lo.IsZero() {
		w.from = lo.Add(-w.length)
	}
	for _, t := range s.rdates {
		if w.shows(t) {
			return true
		}
	}
	rule, err := s.ruleOptions()
	if err != nil {
		return true
	}
	if rule == nil {
		return w.shows(ev.Start.T)
	}
	if !hi.IsZero() && !ev.Start.T.Before(hi) {
		return false
	}
	return w.ruleOverlaps(*rule)
}

// occurrenceWindow is the window as a series' occurrence starts see it:
// from is the window's start less the occurrences' length.
type occurrenceWindow struct {
	from, hi time.Time
	length   time.Duration
	exdates  []time.Time
}

// shows says whether an occurrence starting at t overlaps the window and
// is not excluded.
func (w *occurrenceWindow) shows(t time.Time) bool {
	if !w.from.IsZero() && !t.After(w.from) && !(w.length == 0 && t.Equal(w.from)) {
		return false
	}
	if !w.hi.IsZero() && !t.Before(w.hi) {
		return false
	}
	for _, x := range w.exdates {
		if x.Equal(t) {
			return false
		}
	}
	return true
}

// ruleOverlaps walks the rule's occurrences up to the window's end, at
// most maxExpansion of them; a rule it cannot walk is kept.
func (w *occurrenceWindow) ruleOverlaps(opt rrule.ROption) bool {
	if !opt.Until.IsZero() && !w.from.IsZero() && opt.Until.Before(w.from) {
		return false
	}
	if opt.Count == 0 && opt.Until.IsZero() && w.hi.IsZero() {
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
		if !w.hi.IsZero() && !t.Before(w.hi) {
			return false
		}
		if w.shows(t) {
			return true
		}
	}
	return true
}
