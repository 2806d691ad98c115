package gcalfake

import (
	"fmt"
	"maps"

	calendar "google.golang.org/api/calendar/v3"
)

// What tests and the demo do to the emulator beside the API: look at
// what it stores, seed and edit events as a person would, count requests.

// Stats returns a copy of the request counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.ByOp, st.Errors = maps.Clone(s.stats.ByOp), maps.Clone(s.stats.Errors)
	return st
}

// ResetStats zeroes the request counters.
func (s *Server) ResetStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats = Stats{ByOp: map[string]int{}, Errors: map[int]int{}}
}

// Events returns copies of the calendar's live (not cancelled) stored
// events, ordered by start and id: single events, recurring masters and
// the exceptions of their instances. Agenda is what a person sees.
func (s *Server) Events(calendarID string) []*calendar.Event {
	return s.events(calendarID, false)
}

// AllEvents includes cancelled (deleted) events.
func (s *Server) AllEvents(calendarID string) []*calendar.Event {
	return s.events(calendarID, true)
}

func (s *Server) events(calendarID string, withDeleted bool) []*calendar.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	cal, ok := s.calendars[calendarID]
	if !ok {
		return nil
	}
	v := s.view(cal)
	var out []*calendar.Event
	for _, st := range cal.events {
		if st.purged || (!withDeleted && (st.ev.Status == "cancelled" || st.ev.RecurringEventId != "" && !v.visibleException(st.ev))) {
			continue
		}
		out = append(out, cloneEvent(st.ev))
	}
	sortEvents(out)
	return out
}

// Seed stores an event directly, bypassing the API (a person's own event,
// or a fixture). It gets an id if it has none.
func (s *Server) Seed(calendarID string, ev *calendar.Event) *calendar.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	cal := s.calendars[calendarID]
	ev = cloneEvent(ev)
	if ev.Id == "" {
		ev.Id = s.newID()
	}
	s.stamp(ev, true)
	cal.events[ev.Id] = &stored{ev: ev}
	return cloneEvent(ev)
}

// Delete marks an event (or one instance of a recurring event) deleted as
// a person would in the UI.
func (s *Server) Delete(calendarID, eventID string) {
	s.Edit(calendarID, eventID, func(ev *calendar.Event) { ev.Status = "cancelled" })
}

// Edit changes an event (or one instance of a recurring event, which
// becomes an exception) as a person would in the UI (new etag). An
// instance can be named by the id the API gives it or, whatever the
// readings, by its derived id "{seriesId}_{suffix}". Editing a series
// applies Readings.SeriesUpdate to its exceptions, as an API update does.
func (s *Server) Edit(calendarID, eventID string, edit func(*calendar.Event)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cal := s.calendars[calendarID]
	v := s.view(cal)
	st, in := v.lookup(eventID, true)
	if st == nil {
		if in == nil {
			return
		}
		st = v.materialize(in)
		cal.events[st.ev.Id] = st
	}
	old := cloneEvent(st.ev)
	edit(st.ev)
	s.stamp(st.ev, false)
	s.seriesUpdatedLocked(cal, old, st.ev)
}

// EmptyBin purges every deleted event of a calendar: their ids stay taken
// (insert answers 409) but can no longer be read or restored (get answers
// 404, update 403), as Google does after a person empties the bin.
func (s *Server) EmptyBin(calendarID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.calendars[calendarID].events {
		if st.ev.Status == "cancelled" {
			st.purged = true
		}
	}
}

// String summarises an event for test failure messages.
func String(ev *calendar.Event) string {
	start, end := "", ""
	if ev.Start != nil {
		start = ev.Start.Date + ev.Start.DateTime
	}
	if ev.End != nil {
		end = ev.End.Date + ev.End.DateTime
	}
	return fmt.Sprintf("%s %q %s..%s [%s]", ev.Id, ev.Summary, start, end, ev.Status)
}
