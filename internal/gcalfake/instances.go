package gcalfake

import (
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	calendar "google.golang.org/api/calendar/v3"
)

// instanceRef is one instance of a live recurring master, found by id.
type instanceRef struct {
	master *calendar.Event
	sr     *series
	orig   time.Time
	id     string
}

// liveSeries returns the series of a master whose instances are shown:
// recurring, not deleted.
func liveSeries(st *stored) (*series, bool) {
	if st == nil || st.purged || st.ev.Status == "cancelled" || len(st.ev.Recurrence) == 0 || st.ev.RecurringEventId != "" {
		return nil, false
	}
	sr, err := parseSeries(st.ev)
	return sr, err == nil
}

// instanceOf resolves an instance id "{masterId}_{suffix}" that has no
// exception stored yet.
func instanceOf(cal *calendarState, id string) (instanceRef, bool) {
	i := strings.LastIndexByte(id, '_')
	if i <= 0 {
		return instanceRef{}, false
	}
	st := cal.events[id[:i]]
	sr, ok := liveSeries(st)
	if !ok {
		return instanceRef{}, false
	}
	orig, ok := sr.parseSuffix(id[i+1:])
	if !ok || sr.instanceSuffix(orig) != id[i+1:] || !sr.has(orig) {
		return instanceRef{}, false
	}
	return instanceRef{master: st.ev, sr: sr, orig: orig, id: id}, true
}

func (in instanceRef) virtual() *calendar.Event { return in.sr.instance(in.master, in.orig) }

// materialize returns the instance as an exception to be stored by the
// write that makes it one.
func (in instanceRef) materialize(cal *calendarState) *stored {
	return &stored{ev: cloneEvent(in.virtual())}
}

// exceptionsOf indexes the stored exceptions of every master by instance
// id.
func exceptionsOf(cal *calendarState) map[string]map[string]*calendar.Event {
	out := map[string]map[string]*calendar.Event{}
	for id, st := range cal.events {
		if st.purged || st.ev.RecurringEventId == "" {
			continue
		}
		m := out[st.ev.RecurringEventId]
		if m == nil {
			m = map[string]*calendar.Event{}
			out[st.ev.RecurringEventId] = m
		}
		m[id] = st.ev
	}
	return out
}

// expand calls fn with every instance of a live master in order of
// original start (exceptions in place of the instances they replace,
// cancelled ones included) until fn returns false or the series ends.
func expand(master *calendar.Event, sr *series, exceptions map[string]*calendar.Event, fn func(orig time.Time, ev *calendar.Event) bool) {
	next := sr.occurrences()
	for {
		orig, ok := next()
		if !ok {
			return
		}
		ev := exceptions[master.Id+"_"+sr.instanceSuffix(orig)]
		if ev == nil {
			ev = sr.instance(master, orig)
		}
		if !fn(orig, ev) {
			return
		}
	}
}

// maxMove is how far before its original start an exception of master
// was moved, so that an expansion bounded by timeMax still finds it.
func maxMove(sr *series, exceptions map[string]*calendar.Event) time.Duration {
	var d time.Duration
	for _, ev := range exceptions {
		orig, ok := sr.originalStart(ev)
		start, _, err := eventSpan(ev)
		if ok && err == nil {
			d = max(d, orig.Sub(start))
		}
	}
	return d
}

// visibleException reports whether a stored exception is shown: its
// master is live and still has an instance at its original start.
func visibleException(cal *calendarState, ev *calendar.Event) bool {
	sr, ok := liveSeries(cal.events[ev.RecurringEventId])
	if !ok {
		return false
	}
	orig, ok := sr.originalStart(ev)
	return ok && sr.has(orig)
}

// overlaps reports whether [start, end) meets [lo, hi) (zero bounds are
// open; a zero-length event meets the range it starts in).
func overlaps(start, end, lo, hi time.Time) bool {
	if !hi.IsZero() && !start.Before(hi) {
		return false
	}
	if lo.IsZero() {
		return true
	}
	return end.After(lo) || (end.Equal(start) && !start.Before(lo))
}

// timeRange reads timeMin and timeMax.
func timeRange(q map[string][]string) (lo, hi time.Time, apiErr *APIError) {
	for name, dst := range map[string]*time.Time{"timeMin": &lo, "timeMax": &hi} {
		if v := first(q[name]); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return lo, hi, errBadRequest("Bad Request")
			}
			*dst = t
		}
	}
	return lo, hi, nil
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// paging reads maxResults and pageToken (an offset).
func paging(q map[string][]string) (limit, offset int, apiErr *APIError) {
	limit = 250
	if v := first(q["maxResults"]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, 0, errInvalid("Invalid value for maxResults.")
		}
		limit = min(n, 2500)
	}
	if tok := first(q["pageToken"]); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil {
			return 0, 0, errInvalid("Invalid page token.")
		}
		offset, err = strconv.Atoi(string(b))
		if err != nil || offset < 0 {
			return 0, 0, errInvalid("Invalid page token.")
		}
	}
	return limit, offset, nil
}

func pageToken(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(offset)))
}

// listInstances serves events.instances: the instances of a recurring
// event, exceptions in place, filtered by originalStart or a time range,
// cancelled ones only with showDeleted, paged.
func (s *Server) listInstances(r *http.Request, cal *calendarState) (any, *APIError) {
	st, ok := cal.events[r.PathValue("id")]
	if !ok || st.purged {
		return nil, errNotFound()
	}
	if st.ev.Status == "cancelled" {
		return nil, errDeleted()
	}
	q := r.URL.Query()
	lo, hi, apiErr := timeRange(q)
	if apiErr != nil {
		return nil, apiErr
	}
	limit, offset, apiErr := paging(q)
	if apiErr != nil {
		return nil, apiErr
	}
	showDeleted := q.Get("showDeleted") == "true"
	out := &calendar.Events{Kind: "calendar#events", Summary: cal.summary, TimeZone: cal.timeZone,
		Updated: s.now().UTC().Format(time.RFC3339Nano), Items: []*calendar.Event{}}
	sr, ok := liveSeries(st)
	if !ok {
		return out, nil
	}
	var target time.Time
	if v := q.Get("originalStart"); v != "" {
		t, err := sr.parseOriginalStart(v)
		if err != nil {
			return nil, errBadRequest("Bad Request")
		}
		target = t
	}
	exceptions := exceptionsOf(cal)[st.ev.Id]
	stopAt := time.Time{}
	if !hi.IsZero() {
		stopAt = hi.Add(maxMove(sr, exceptions))
	}
	matched := 0
	more := false
	expand(st.ev, sr, exceptions, func(orig time.Time, ev *calendar.Event) bool {
		if !target.IsZero() && orig.After(target) || !stopAt.IsZero() && !orig.Before(stopAt) {
			return false
		}
		if !target.IsZero() && !orig.Equal(target) {
			return true
		}
		if ev.Status == "cancelled" && !showDeleted {
			return true
		}
		if start, end, err := eventSpan(ev); err != nil || !overlaps(start, end, lo, hi) {
			return true
		}
		matched++
		switch {
		case matched <= offset:
		case len(out.Items) < limit:
			out.Items = append(out.Items, cloneEvent(ev))
		default:
			more = true
			return false
		}
		return true
	})
	if more {
		out.NextPageToken = pageToken(offset + limit)
	}
	return out, nil
}

// singleEvents expands the calendar's events as events.list does with
// singleEvents=true: instances of recurring events instead of their
// masters and exceptions.
func singleEvents(cal *calendarState, lo, hi time.Time, showDeleted bool, keep func(*calendar.Event) bool) []*calendar.Event {
	exceptions := exceptionsOf(cal)
	var out []*calendar.Event
	for _, st := range cal.events {
		ev := st.ev
		switch {
		case st.purged, ev.RecurringEventId != "", !keep(ev):
			continue
		case len(ev.Recurrence) == 0:
			if ev.Status == "cancelled" && !showDeleted {
				continue
			}
			if start, end, err := eventSpan(ev); err == nil && !overlaps(start, end, lo, hi) {
				continue
			}
			out = append(out, ev)
			continue
		}
		sr, ok := liveSeries(st)
		if !ok {
			continue
		}
		exc := exceptions[ev.Id]
		stopAt := time.Time{}
		if !hi.IsZero() {
			stopAt = hi.Add(maxMove(sr, exc))
		}
		expand(ev, sr, exc, func(orig time.Time, inst *calendar.Event) bool {
			if !stopAt.IsZero() && !orig.Before(stopAt) {
				return false
			}
			if inst.Status == "cancelled" && !showDeleted {
				return true
			}
			if start, end, err := eventSpan(inst); err == nil && overlaps(start, end, lo, hi) {
				out = append(out, inst)
			}
			return true
		})
	}
	return out
}

// Occurrence is one thing a person sees in the calendar: a single event or
// one instance of a recurring event.
type Occurrence struct {
	Summary string
	// Start and End are instants; all-day occurrences run from midnight
	// UTC of their first day to midnight UTC after their last.
	Start, End time.Time
	AllDay     bool
	// EventID is the event's or instance's id.
	EventID string
}

func (o Occurrence) String() string {
	if o.AllDay {
		return o.Start.Format("2006-01-02") + ".." + o.End.Format("2006-01-02") + " " + strconv.Quote(o.Summary)
	}
	return o.Start.UTC().Format(time.RFC3339) + ".." + o.End.UTC().Format(time.RFC3339) + " " + strconv.Quote(o.Summary)
}

// Agenda answers "what would a person see between from and to?": every
// live single event and every shown instance of every recurring event that
// overlaps [from, to), ordered by start, end and title.
func (s *Server) Agenda(calendarID string, from, to time.Time) []Occurrence {
	s.mu.Lock()
	defer s.mu.Unlock()
	cal, ok := s.calendars[calendarID]
	if !ok {
		return nil
	}
	var out []Occurrence
	for _, ev := range singleEvents(cal, from, to, false, func(*calendar.Event) bool { return true }) {
		start, end, err := eventSpan(ev)
		if err != nil {
			continue
		}
		out = append(out, Occurrence{Summary: ev.Summary, Start: start, End: end, AllDay: ev.Start.Date != "", EventID: ev.Id})
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
