package gcalfake

import (
	"slices"
	"strconv"
	"strings"
	"time"

	calendar "google.golang.org/api/calendar/v3"
)

// singleEvents expands the calendar's events as events.list does with
// singleEvents=true: instances of recurring events instead of their
// masters and exceptions. keep filters events (a master's instances pass or
// fail with it), [lo, hi) instants. With loose it also returns candidates
// for a loose filter, the items that fail keep or the range: at most a
// picker's worth per event, so that an endless series is not expanded to
// its end for them.
func (v view) singleEvents(lo, hi time.Time, showDeleted bool, keep func(*calendar.Event) bool, loose bool) (match, cand []*calendar.Event) {
	exceptions := exceptionsOf(v.cal)
	for _, st := range v.cal.events {
		ev := st.ev
		if st.purged || ev.RecurringEventId != "" {
			continue
		}
		kept := keep(ev)
		if !kept && !loose {
			continue
		}
		if len(ev.Recurrence) == 0 {
			if ev.Status == "cancelled" && !showDeleted {
				continue
			}
			start, end, err := eventSpan(ev)
			if kept && (err != nil || overlaps(start, end, lo, hi)) {
				match = append(match, ev)
			} else {
				cand = append(cand, ev)
			}
			continue
		}
		sr, ok := v.liveSeries(st)
		if !ok {
			continue
		}
		exc := exceptions[ev.Id]
		stopAt := time.Time{}
		if !hi.IsZero() {
			stopAt = hi.Add(maxMove(sr, exc))
		}
		var p *loosePicker
		if loose {
			p = &loosePicker{seed: v.seed}
		}
		tail := 0
		v.expand(ev, sr, exc, func(orig time.Time, inst *calendar.Event) bool {
			if !stopAt.IsZero() && !orig.Before(stopAt) {
				if tail++; p == nil || tail > looseTail || p.full() {
					return false
				}
			}
			if !kept && p.full() {
				return false
			}
			if inst.Status == "cancelled" && !showDeleted {
				return true
			}
			if kept && tail == 0 && spanOverlaps(inst, lo, hi) {
				match = append(match, inst)
			} else if p != nil && p.take(inst.Id) {
				cand = append(cand, inst)
			}
			return true
		})
	}
	return match, cand
}

// Occurrence is one thing a person sees in the calendar: a single event or
// one instance of a recurring event.
type Occurrence struct {
	Summary string
	// Start and End are instants; all-day occurrences run from midnight
	// UTC of their first day to midnight UTC after their last.
	Start, End time.Time
	AllDay     bool
	// EventID is the event's or instance's id, as the API gives it under
	// the readings in force.
	EventID string
	// SeriesID and OriginalStart name the instance of a recurring event
	// (its recurringEventId and originalStartTime, an instant or midnight
	// UTC of the date); both are zero for a single event.
	SeriesID      string
	OriginalStart time.Time
	// Location and Description are what the person reads in the event.
	Location, Description string
}

// String renders the occurrence's time and title; it leaves the other
// fields out, so that feeds' expectations can be written the same way.
func (o Occurrence) String() string {
	if o.AllDay {
		return o.Start.Format("2006-01-02") + ".." + o.End.Format("2006-01-02") + " " + strconv.Quote(o.Summary)
	}
	return o.Start.UTC().Format(time.RFC3339) + ".." + o.End.UTC().Format(time.RFC3339) + " " + strconv.Quote(o.Summary)
}

// Agenda answers "what would a person see between from and to?": every
// live single event and every shown instance of every recurring event that
// overlaps [from, to), ordered by start, end and title. It is the truth of
// the calendar under the readings in force: loose filters do not touch it,
// and it shows exceptions left off their rule only under OffRuleKept.
func (s *Server) Agenda(calendarID string, from, to time.Time) []Occurrence {
	s.mu.Lock()
	defer s.mu.Unlock()
	cal, ok := s.calendars[calendarID]
	if !ok {
		return nil
	}
	evs, _ := s.view(cal).singleEvents(from, to, false, func(*calendar.Event) bool { return true }, false)
	var out []Occurrence
	for _, ev := range evs {
		start, end, err := eventSpan(ev)
		if err != nil {
			continue
		}
		o := Occurrence{Summary: ev.Summary, Start: start, End: end, AllDay: ev.Start.Date != "", EventID: ev.Id,
			SeriesID: ev.RecurringEventId, Location: ev.Location, Description: ev.Description}
		if ev.OriginalStartTime != nil {
			o.OriginalStart, _ = parseEventTime(ev.OriginalStartTime, "originalStart")
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b Occurrence) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		if c := a.End.Compare(b.End); c != 0 {
			return c
		}
		return strings.Compare(a.Summary, b.Summary)
	})
	return out
}

// InstanceID is the id the API gives the instance of series seriesID whose
// original start is originalStart (an instant, or a date at midnight UTC
// for an all-day series) under the readings in force: the stored
// exception's id if there is one, else the instance's. It is "" when the
// series has no such instance.
func (s *Server) InstanceID(calendarID, seriesID string, originalStart time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	cal, ok := s.calendars[calendarID]
	if !ok {
		return ""
	}
	v := s.view(cal)
	if st := v.exceptionAt(seriesID, originalStart); st != nil && !st.purged {
		return st.ev.Id
	}
	sr, ok := v.liveSeries(cal.events[seriesID])
	if !ok || !sr.has(originalStart) {
		return ""
	}
	return v.instanceID(cal.events[seriesID].ev, sr, originalStart)
}
