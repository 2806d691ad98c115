package gcalfake

import (
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	calendar "google.golang.org/api/calendar/v3"
)

func (s *Server) getCalendar(r *http.Request, cal *calendarState) (any, *APIError) {
	return &calendar.Calendar{Kind: "calendar#calendar", Id: cal.id, Summary: cal.summary, TimeZone: cal.timeZone, Etag: `"` + cal.id + `"`}, nil
}

func (s *Server) getEvent(r *http.Request, cal *calendarState) (any, *APIError) {
	v := s.view(cal)
	st, in := v.lookup(r.PathValue("id"), false)
	switch {
	case st != nil && !st.purged:
		return st.ev, nil
	case in != nil:
		return v.virtual(in), nil
	}
	return nil, errNotFound()
}

func (s *Server) insertEvent(r *http.Request, cal *calendarState) (any, *APIError) {
	ev, apiErr := decodeEvent(r)
	if apiErr != nil {
		return nil, apiErr
	}
	if ev.Id == "" {
		ev.Id = s.newID()
	} else if !validID(ev.Id) {
		return nil, errInvalid("Invalid resource id value.")
	}
	if _, exists := cal.events[ev.Id]; exists {
		return nil, errDuplicate()
	}
	if apiErr := cmp.Or(validateEvent(ev), s.readings.checkExRule(ev)); apiErr != nil {
		return nil, apiErr
	}
	if ev.Status == "" {
		ev.Status = "confirmed"
	}
	s.stamp(ev, true)
	cal.events[ev.Id] = &stored{ev: ev}
	return ev, nil
}

func (s *Server) updateEvent(r *http.Request, cal *calendarState) (any, *APIError) {
	st, apiErr := s.writable(r, cal)
	if apiErr != nil {
		return nil, apiErr
	}
	ev, apiErr := decodeEvent(r)
	if apiErr != nil {
		return nil, apiErr
	}
	if st.ev.RecurringEventId != "" {
		if len(ev.Recurrence) > 0 {
			return nil, errInvalidRecurrence()
		}
		// An instance's link to its series is immutable.
		ev.RecurringEventId, ev.OriginalStartTime = st.ev.RecurringEventId, st.ev.OriginalStartTime
	}
	if apiErr := cmp.Or(validateEvent(ev), s.readings.checkExRule(ev)); apiErr != nil {
		return nil, apiErr
	}
	ev.Id = st.ev.Id
	ev.Created = st.ev.Created
	ev.ICalUID = st.ev.ICalUID
	if ev.Status == "" {
		ev.Status = "confirmed"
	}
	s.stamp(ev, false)
	old := st.ev
	st.ev = ev
	cal.events[ev.Id] = st
	s.seriesUpdatedLocked(cal, old, ev)
	return ev, nil
}

func (s *Server) patchEvent(r *http.Request, cal *calendarState) (any, *APIError) {
	st, apiErr := s.writable(r, cal)
	if apiErr != nil {
		return nil, apiErr
	}
	var patch map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&patch); err != nil {
		return nil, errBadRequest("Invalid JSON payload.")
	}
	cur, _ := json.Marshal(st.ev)
	var merged map[string]json.RawMessage
	_ = json.Unmarshal(cur, &merged)
	for k, v := range patch {
		if k == "id" || k == "iCalUID" || k == "created" || k == "recurringEventId" || k == "originalStartTime" {
			continue
		}
		if string(v) == "null" {
			delete(merged, k)
			continue
		}
		merged[k] = v
	}
	raw, _ := json.Marshal(merged)
	var ev calendar.Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, errBadRequest("Invalid JSON payload.")
	}
	if apiErr := cmp.Or(validateEvent(&ev), s.readings.checkExRule(&ev)); apiErr != nil {
		return nil, apiErr
	}
	s.stamp(&ev, false)
	old := st.ev
	st.ev = &ev
	cal.events[ev.Id] = st
	s.seriesUpdatedLocked(cal, old, &ev)
	return &ev, nil
}

func (s *Server) deleteEvent(r *http.Request, cal *calendarState) (any, *APIError) {
	v := s.view(cal)
	st, in := v.lookup(r.PathValue("id"), false)
	if st == nil {
		if in == nil {
			return nil, errNotFound()
		}
		// Deleting an instance stores a cancelled exception.
		st = v.materialize(in)
	}
	if st.purged {
		return nil, errNotFound()
	}
	if st.ev.Status == "cancelled" {
		return nil, errDeleted()
	}
	if m := r.Header.Get("If-Match"); m != "" && m != st.ev.Etag {
		return nil, errConditionNotMet()
	}
	st.ev.Status = "cancelled"
	s.stamp(st.ev, false)
	cal.events[st.ev.Id] = st
	return nil, nil
}

// writable finds the event an update or patch targets and checks If-Match.
func (s *Server) writable(r *http.Request, cal *calendarState) (*stored, *APIError) {
	v := s.view(cal)
	st, in := v.lookup(r.PathValue("id"), false)
	if st == nil {
		if in == nil {
			return nil, errNotFound()
		}
		if m := r.Header.Get("If-Match"); m != "" && m != in.master.Etag {
			return nil, errConditionNotMet()
		}
		// Writing an instance makes it an exception; the write below
		// gives it its own etag.
		return v.materialize(in), nil
	}
	if st.purged {
		return nil, errForbidden()
	}
	if m := r.Header.Get("If-Match"); m != "" && m != st.ev.Etag {
		return nil, errConditionNotMet()
	}
	return st, nil
}

func decodeEvent(r *http.Request) (*calendar.Event, *APIError) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		return nil, errBadRequest("Could not read the request body.")
	}
	var ev calendar.Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, errBadRequest("Invalid JSON payload received.")
	}
	// Read-only fields a client cannot set.
	ev.Etag, ev.Updated, ev.Created, ev.HtmlLink, ev.Kind = "", "", "", "", ""
	if ev.ExtendedProperties != nil {
		clampProps(ev.ExtendedProperties.Private)
		clampProps(ev.ExtendedProperties.Shared)
	}
	return &ev, nil
}

// clampProps applies Google's limits: keys over 44 characters are silently
// dropped, values over 1024 characters silently truncated.
func clampProps(m map[string]string) {
	for k, v := range m {
		if len(k) > 44 {
			delete(m, k)
			continue
		}
		if len(v) > 1024 {
			m[k] = v[:1024]
		}
	}
}

func (s *Server) stamp(ev *calendar.Event, created bool) {
	s.etagSeq++
	now := s.now().UTC().Format("2006-01-02T15:04:05.000Z")
	ev.Etag = `"` + strconv.FormatInt(3000000000000000+s.etagSeq, 10) + `"`
	ev.Updated = now
	ev.Kind = "calendar#event"
	if created || ev.Created == "" {
		ev.Created = now
	}
	if ev.ICalUID == "" {
		ev.ICalUID = ev.Id + "@google.com"
	}
	ev.HtmlLink = "https://www.google.com/calendar/event?eid=" + ev.Id
}
