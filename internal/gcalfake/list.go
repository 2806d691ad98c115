package gcalfake

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	calendar "google.golang.org/api/calendar/v3"
)

// listEvents serves events.list: the calendar's events, or with
// singleEvents their instances, filtered by iCalUID, extended properties
// and a time range, cancelled ones only with showDeleted, paged.
func (s *Server) listEvents(r *http.Request, cal *calendarState) (any, *APIError) {
	q := r.URL.Query()
	showDeleted := q.Get("showDeleted") == "true"
	single := q.Get("singleEvents") == "true"
	if ob := q.Get("orderBy"); ob != "" && (ob != "updated" && (ob != "startTime" || !single)) {
		// Google orders by start time only when it expands instances.
		return nil, errBadRequest("The requested ordering is not available for the particular query.")
	}
	maxResults, offset, apiErr := paging(q)
	if apiErr != nil {
		return nil, apiErr
	}
	var privFilters, sharedFilters [][2]string
	for _, f := range q["privateExtendedProperty"] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, errInvalid("Invalid privateExtendedProperty filter.")
		}
		privFilters = append(privFilters, [2]string{k, v})
	}
	for _, f := range q["sharedExtendedProperty"] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, errInvalid("Invalid sharedExtendedProperty filter.")
		}
		sharedFilters = append(sharedFilters, [2]string{k, v})
	}
	timeMin, timeMax, apiErr := timeRange(q)
	if apiErr != nil {
		return nil, apiErr
	}
	icalUID := q.Get("iCalUID")
	v := s.view(cal)
	anyOf := v.r.PropertyRepeats == PropertiesOr
	keep := func(ev *calendar.Event) bool {
		return (icalUID == "" || ev.ICalUID == icalUID) && matchProps(ev, privFilters, true, anyOf) && matchProps(ev, sharedFilters, false, anyOf)
	}
	loose := v.r.Filters == FiltersLoose

	var all, cand []*calendar.Event
	if single {
		all, cand = v.singleEvents(timeMin, timeMax, showDeleted, keep, loose)
	} else {
		all, cand = v.storedEvents(timeMin, timeMax, showDeleted, keep, loose)
	}
	if p := v.looseFilter(); p != nil {
		sortEvents(cand)
		for _, ev := range cand {
			if p.take(ev.Id) {
				all = append(all, ev)
			}
		}
	}
	sortEvents(all)
	if offset > len(all) {
		return nil, errInvalid("Invalid page token.")
	}
	end := min(offset+maxResults, len(all))
	out := &calendar.Events{
		Kind:     "calendar#events",
		Summary:  cal.summary,
		TimeZone: cal.timeZone,
		Updated:  s.now().UTC().Format(time.RFC3339Nano),
		Items:    make([]*calendar.Event, 0, end-offset),
	}
	for _, ev := range all[offset:end] {
		out.Items = append(out.Items, ev)
	}
	if end < len(all) {
		out.NextPageToken = pageToken(end)
	} else {
		out.NextSyncToken = base64.RawURLEncoding.EncodeToString([]byte("sync:" + strconv.FormatInt(s.etagSeq, 10)))
	}
	return out, nil
}

// storedEvents lists the calendar's events as events.list does without
// singleEvents: single events, recurring masters (whatever the range) and
// the exceptions shown, filtered by keep and [lo, hi). With loose it also
// returns the items that fail keep or the range, as candidates for a
// loose filter.
func (v view) storedEvents(lo, hi time.Time, showDeleted bool, keep func(*calendar.Event) bool, loose bool) (match, cand []*calendar.Event) {
	for _, st := range v.cal.events {
		ev := st.ev
		if st.purged || (!showDeleted && ev.Status == "cancelled") {
			continue
		}
		if ev.RecurringEventId != "" && !v.visibleException(ev) {
			continue
		}
		ok := keep(ev)
		if ok && len(ev.Recurrence) == 0 {
			start, end, err := eventSpan(ev)
			ok = err != nil || overlaps(start, end, lo, hi)
		}
		if ok {
			match = append(match, ev)
		} else if loose {
			cand = append(cand, ev)
		}
	}
	return match, cand
}

// matchProps: every constraint must match (the discovery document's
// reading of repeated filters), or with anyOf one of them (the extended
// properties guide's).
func matchProps(ev *calendar.Event, filters [][2]string, private, anyOf bool) bool {
	if len(filters) == 0 {
		return true
	}
	if ev.ExtendedProperties == nil {
		return false
	}
	props := ev.ExtendedProperties.Shared
	if private {
		props = ev.ExtendedProperties.Private
	}
	for _, f := range filters {
		v, ok := props[f[0]]
		hit := ok && v == f[1]
		if hit == anyOf {
			return hit
		}
	}
	return !anyOf
}
