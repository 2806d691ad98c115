package gcalfake

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/teambition/rrule-go"
	calendar "google.golang.org/api/calendar/v3"
)

// How the emulator models recurrence, from the Calendar API reference
// (docs/google.md §3.4) and public reports:
//
//   - A recurring event (the master) holds RRULE, EXRULE, RDATE and EXDATE
//     lines and is expanded in start.timeZone, keeping the wall-clock time
//     across DST changes; each instance lasts as long as the master.
//   - Instances have ids "{masterId}_{YYYYMMDDTHHMMSSZ}" (timed, the
//     original start in UTC) or "{masterId}_{YYYYMMDD}" (all-day). Google
//     has announced a change of that format: callers must treat them as
//     opaque and find instances through events.instances
//     (Readings.InstanceIDs models both).
//   - Writing an instance (update, patch, delete) stores an exception: a
//     full event of its own with recurringEventId and originalStartTime.
//     Deleting an instance stores a cancelled exception.
//   - Exceptions are independent copies: by default a later update of the
//     master does not change them (Google does not document any
//     propagation; Readings.SeriesUpdate models the other readings). An
//     exception whose original start is no longer an occurrence of its
//     master (the rule, an EXDATE or the start changed) is by default no
//     longer shown (Readings.OffRule), and no instance of a deleted master
//     ever is.
//   - Whether Google applies an EXRULE line is undocumented
//     (Readings.ExRule: applied, ignored, or refused on write).
//   - Google refuses recurrence rules its parser does not take with 400
//     "Invalid recurrence rule." The emulator refuses malformed lines, parts
//     RFC 5545 does not define, FREQ finer than DAILY (Google has no such
//     series; it answered "Server error" to FREQ=HOURLY in
//     googleapis/google-api-ruby-client#572), COUNT with UNTIL, a COUNT or
//     INTERVAL below 1 (GAS-ICS-Sync#466: COUNT=-1), a floating UNTIL
//     date-time (google/googleapis.dart#223), and the part combinations
//     RFC 5545 forbids (BYWEEKNO outside YEARLY, BYYEARDAY in DAILY, WEEKLY
//     or MONTHLY, BYMONTHDAY in WEEKLY, an ordinal BYDAY outside MONTHLY and
//     YEARLY, BYSETPOS alone).

// maxInstances bounds the expansion of one series: an endless series is
// cut there, as a listing without timeMax would otherwise never end.
const maxInstances = 20000

// series is a master's recurrence, ready to expand.
type series struct {
	allDay bool
	loc    *time.Location
	tz     string
	// start is the first instance's start: an instant in loc, or a date at
	// midnight UTC for an all-day series.
	start time.Time
	// length is a timed instance's duration; days an all-day one's.
	length time.Duration
	days   int
	rules  []*rrule.RRule
	exrule []*rrule.RRule
	rdates []time.Time
	exdate []time.Time
	// exdays are EXDATEs given as dates in a timed series: every instance
	// on that local date is excluded.
	exdays map[string]bool
}

// parseSeries reads a master's recurrence. It assumes validateEvent passed.
func parseSeries(ev *calendar.Event) (*series, *APIError) {
	s := &series{}
	start, err := parseEventTime(ev.Start, "start")
	if err != nil {
		return nil, err
	}
	end, err := parseEventTime(ev.End, "end")
	if err != nil {
		return nil, err
	}
	if ev.Start.Date != "" {
		s.allDay, s.loc = true, time.UTC
		s.start = start
		s.days = int(end.Sub(start).Hours()+12) / 24
	} else {
		loc, lerr := loadLocation(ev.Start.TimeZone)
		if lerr != nil {
			return nil, errBadRequest("Invalid time zone definition for start time.")
		}
		s.loc, s.tz = loc, ev.Start.TimeZone
		s.start = start.In(loc)
		s.length = end.Sub(start)
	}
	for _, line := range ev.Recurrence {
		name, params, value, aerr := splitLine(line)
		if aerr != nil {
			return nil, aerr
		}
		switch name {
		case "RRULE", "EXRULE":
			r, aerr := s.rule(value)
			if aerr != nil {
				return nil, aerr
			}
			if name == "RRULE" {
				s.rules = append(s.rules, r)
			} else {
				s.exrule = append(s.exrule, r)
			}
		case "RDATE", "EXDATE":
			if aerr := s.dates(name, params, value); aerr != nil {
				return nil, aerr
			}
		default:
			return nil, errInvalidRecurrence()
		}
	}
	return s, nil
}

// parseSeries is parseSeries under r: its EXRULEs are applied only under
// ExRuleApplied.
func (r Readings) parseSeries(ev *calendar.Event) (*series, *APIError) {
	s, err := parseSeries(ev)
	if err == nil && r.ExRule != ExRuleApplied {
		s.exrule = nil
	}
	return s, err
}

// checkExRule refuses an event with an EXRULE line under ExRuleRejected.
func (r Readings) checkExRule(ev *calendar.Event) *APIError {
	if r.ExRule != ExRuleRejected {
		return nil
	}
	for _, line := range ev.Recurrence {
		head, _, _ := strings.Cut(line, ":")
		name, _, _ := strings.Cut(head, ";")
		if strings.EqualFold(strings.TrimSpace(name), "EXRULE") {
			return errInvalidRecurrence()
		}
	}
	return nil
}

func errInvalidRecurrence() *APIError { return errInvalid("Invalid recurrence rule.") }

// splitLine cuts "NAME;PARAM=V;...:VALUE".
func splitLine(line string) (name string, params map[string]string, value string, err *APIError) {
	head, value, ok := strings.Cut(line, ":")
	if !ok || strings.TrimSpace(value) == "" {
		return "", nil, "", errInvalidRecurrence()
	}
	parts := strings.Split(head, ";")
	name = strings.ToUpper(strings.TrimSpace(parts[0]))
	params = map[string]string{}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return "", nil, "", errInvalidRecurrence()
		}
		params[strings.ToUpper(k)] = strings.Trim(v, `"`)
	}
	return name, params, strings.TrimSpace(value), nil
}

var weekdays = map[string]bool{"MO": true, "TU": true, "WE": true, "TH": true, "FR": true, "SA": true, "SU": true}

// rule validates an RRULE or EXRULE value as strictly as Google's parser
// and builds it anchored at the series' start.
func (s *series) rule(value string) (*rrule.RRule, *APIError) {
	bad := errInvalidRecurrence
	parts := map[string]string{}
	for part := range strings.SplitSeq(value, ";") {
		k, v, ok := strings.Cut(part, "=")
		k = strings.ToUpper(k)
		if !ok || v == "" {
			return nil, bad()
		}
		if _, dup := parts[k]; dup {
			return nil, bad()
		}
		parts[k] = strings.ToUpper(v)
	}
	freq := parts["FREQ"]
	switch freq {
	case "YEARLY", "MONTHLY", "WEEKLY", "DAILY":
	default:
		return nil, bad()
	}
	ints := func(v string, lo, hi int, signed bool) bool {
		for x := range strings.SplitSeq(v, ",") {
			n, err := strconv.Atoi(x)
			if err != nil || n == 0 && lo > 0 {
				return false
			}
			if n < 0 {
				if !signed {
					return false
				}
				n = -n
			}
			if n < lo || n > hi {
				return false
			}
		}
		return true
	}
	for k, v := range parts {
		ok := true
		switch k {
		case "FREQ":
		case "UNTIL":
			ok = validUntil(v)
		case "COUNT", "INTERVAL":
			n, err := strconv.Atoi(v)
			ok = err == nil && n >= 1
		case "BYSECOND":
			ok = ints(v, 0, 60, false)
		case "BYMINUTE":
			ok = ints(v, 0, 59, false)
		case "BYHOUR":
			ok = ints(v, 0, 23, false)
		case "BYMONTH":
			ok = ints(v, 1, 12, false)
		case "BYMONTHDAY":
			ok = ints(v, 1, 31, true) && freq != "WEEKLY"
		case "BYYEARDAY":
			ok = ints(v, 1, 366, true) && freq == "YEARLY"
		case "BYWEEKNO":
			ok = ints(v, 1, 53, true) && freq == "YEARLY"
		case "BYSETPOS":
			ok = ints(v, 1, 366, true)
		case "WKST":
			ok = weekdays[v]
		case "BYDAY":
			for d := range strings.SplitSeq(v, ",") {
				if len(d) < 2 || !weekdays[d[len(d)-2:]] {
					ok = false
					break
				}
				if ord := d[:len(d)-2]; ord != "" {
					_, hasWeekNo := parts["BYWEEKNO"]
					if (freq != "MONTHLY" && freq != "YEARLY") || (freq == "YEARLY" && hasWeekNo) || !ints(strings.TrimPrefix(ord, "+"), 1, 53, true) {
						ok = false
						break
					}
				}
			}
		default:
			ok = false
		}
		if !ok {
			return nil, bad()
		}
	}
	_, hasUntil := parts["UNTIL"]
	_, hasCount := parts["COUNT"]
	if hasUntil && hasCount {
		return nil, bad()
	}
	if _, ok := parts["BYSETPOS"]; ok {
		other := false
		for k := range parts {
			other = other || (strings.HasPrefix(k, "BY") && k != "BYSETPOS")
		}
		if !other {
			return nil, bad()
		}
	}
	opt, err := rrule.StrToROptionInLocation(value, s.loc)
	if err != nil {
		return nil, bad()
	}
	if u := parts["UNTIL"]; len(u) == 8 && !s.allDay {
		// A date UNTIL on a timed series includes that whole day.
		d, _ := time.ParseInLocation("20060102", u, s.loc)
		opt.Until = d.AddDate(0, 0, 1).Add(-time.Second)
	}
	opt.Dtstart = s.start
	r, err := rrule.NewRRule(*opt)
	if err != nil {
		return nil, bad()
	}
	return r, nil
}

// validUntil: a date, or a UTC date-time. A floating date-time is refused.
func validUntil(v string) bool {
	switch {
	case len(v) == 8:
		_, err := time.Parse("20060102", v)
		return err == nil
	case len(v) == 16 && v[15] == 'Z':
		_, err := time.Parse("20060102T150405Z", v)
		return err == nil
	}
	return false
}

// dates reads an RDATE or EXDATE line: dates, UTC date-times, or local
// date-times in TZID (or the series' zone).
func (s *series) dates(name string, params map[string]string, value string) *APIError {
	loc := s.loc
	if tz := params["TZID"]; tz != "" {
		l, err := loadLocation(tz)
		if err != nil {
			return errInvalidRecurrence()
		}
		loc = l
	}
	for v := range strings.SplitSeq(value, ",") {
		v = strings.TrimSpace(v)
		if i := strings.IndexByte(v, '/'); i >= 0 {
			v = v[:i] // a PERIOD: its start
		}
		var (
			t   time.Time
			err error
		)
		isDate := len(v) == 8
		switch {
		case isDate:
			t, err = time.Parse("20060102", v)
		case strings.HasSuffix(v, "Z"):
			t, err = time.Parse("20060102T150405Z", v)
		default:
			t, err = time.ParseInLocation("20060102T150405", v, loc)
		}
		if err != nil {
			return errInvalidRecurrence()
		}
		switch {
		case s.allDay && !isDate:
			l := t.In(loc)
			t = time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, time.UTC)
		case !s.allDay && isDate && name == "EXDATE":
			if s.exdays == nil {
				s.exdays = map[string]bool{}
			}
			s.exdays[t.Format("20060102")] = true
			continue
		case !s.allDay && isDate:
			st := s.start
			t = time.Date(t.Year(), t.Month(), t.Day(), st.Hour(), st.Minute(), st.Second(), 0, s.loc)
		}
		if name == "RDATE" {
			s.rdates = append(s.rdates, t)
		} else {
			s.exdate = append(s.exdate, t)
		}
	}
	return nil
}

// occurrences returns an iterator over the original starts of the series,
// in order, without duplicates or excluded ones, at most maxInstances. The
// first instance is the event's own start, whether or not the rules
// produce it (RFC 5545 counts DTSTART as the first instance).
func (s *series) occurrences() func() (time.Time, bool) {
	var gens []func() (time.Time, bool)
	first := true
	gens = append(gens, func() (time.Time, bool) {
		if first {
			first = false
			return s.start, true
		}
		return time.Time{}, false
	})
	for _, r := range s.rules {
		gens = append(gens, countingFromStart(r, s.start))
	}
	rd := slices.SortedFunc(slices.Values(s.rdates), func(a, b time.Time) int { return a.Compare(b) })
	gens = append(gens, func() (time.Time, bool) {
		if len(rd) == 0 {
			return time.Time{}, false
		}
		t := rd[0]
		rd = rd[1:]
		return t, true
	})
	heads := make([]time.Time, len(gens))
	live := make([]bool, len(gens))
	for i, g := range gens {
		heads[i], live[i] = g()
	}
	var last time.Time
	emitted := 0
	return func() (time.Time, bool) {
		for emitted < maxInstances {
			best := -1
			for i := range gens {
				if live[i] && (best < 0 || heads[i].Before(heads[best])) {
					best = i
				}
			}
			if best < 0 {
				return time.Time{}, false
			}
			t := heads[best]
			heads[best], live[best] = gens[best]()
			if !last.IsZero() && !t.After(last) {
				continue
			}
			last = t
			if s.excluded(t) {
				continue
			}
			emitted++
			return t, true
		}
		return time.Time{}, false
	}
}

func (s *series) excluded(t time.Time) bool {
	for _, x := range s.exdate {
		if x.Equal(t) {
			return true
		}
	}
	if s.exdays[t.In(s.loc).Format("20060102")] {
		return true
	}
	for _, r := range s.exrule {
		if len(r.Between(t, t, true)) > 0 {
			return true
		}
	}
	return false
}

// countingFromStart iterates a rule whose COUNT includes the series'
// start even when the rule itself does not produce it (RFC 5545: DTSTART
// always counts as the first instance).
func countingFromStart(r *rrule.RRule, start time.Time) func() (time.Time, bool) {
	next := r.Iterator()
	limit := -1
	if r.OrigOptions.Count > 0 {
		limit = r.OrigOptions.Count
	}
	n := 0
	return func() (time.Time, bool) {
		t, ok := next()
		if !ok || limit == 0 {
			return time.Time{}, false
		}
		if n == 0 && !t.Equal(start) && limit > 0 {
			limit-- // the start took the first place
		}
		n++
		if limit >= 0 && n > limit {
			return time.Time{}, false
		}
		return t, true
	}
}

// has reports whether orig is an instance's original start.
func (s *series) has(orig time.Time) bool {
	next := s.occurrences()
	for {
		t, ok := next()
		if !ok || t.After(orig) {
			return false
		}
		if t.Equal(orig) {
			return true
		}
	}
}

// end is the end of the instance that starts at start.
func (s *series) end(start time.Time) time.Time {
	if s.allDay {
		return start.AddDate(0, 0, s.days)
	}
	return start.Add(s.length)
}

// instanceSuffix is the part of an instance id after "{masterId}_".
func (s *series) instanceSuffix(orig time.Time) string {
	if s.allDay {
		return orig.Format("20060102")
	}
	return orig.UTC().Format("20060102T150405Z")
}

// parseSuffix reads an instance id's suffix back.
func (s *series) parseSuffix(suffix string) (time.Time, bool) {
	if s.allDay {
		t, err := time.Parse("20060102", suffix)
		return t, err == nil
	}
	t, err := time.Parse("20060102T150405Z", suffix)
	return t.In(s.loc), err == nil
}

// dateTime renders an instant or date as Google does for this series.
func (s *series) dateTime(t time.Time) *calendar.EventDateTime {
	if s.allDay {
		return &calendar.EventDateTime{Date: t.Format("2006-01-02")}
	}
	return &calendar.EventDateTime{DateTime: t.In(s.loc).Format(time.RFC3339), TimeZone: s.tz}
}

// instance is the unmodified instance of master at orig, with id. It
// shares the master's nested values: it is only read (materialize copies
// it).
func (s *series) instance(master *calendar.Event, orig time.Time, id string) *calendar.Event {
	c := *master
	ev := &c
	ev.Id = id
	ev.Recurrence = nil
	ev.RecurringEventId = master.Id
	ev.OriginalStartTime = s.dateTime(orig)
	ev.Start = s.dateTime(orig)
	ev.End = s.dateTime(s.end(orig))
	if ev.End.TimeZone != "" && master.End != nil && master.End.TimeZone != "" {
		ev.End.TimeZone = master.End.TimeZone
	}
	ev.HtmlLink = "https://www.google.com/calendar/event?eid=" + ev.Id
	return ev
}

// originalStart reads an exception's originalStartTime.
func (s *series) originalStart(ev *calendar.Event) (time.Time, bool) {
	if ev.OriginalStartTime == nil {
		return time.Time{}, false
	}
	t, err := parseEventTime(ev.OriginalStartTime, "originalStart")
	if err != nil {
		return time.Time{}, false
	}
	if s.allDay {
		return t, true
	}
	return t.In(s.loc), true
}

// parseOriginalStart reads the originalStart parameter of
// events.instances: an RFC 3339 date-time or, for all-day series, a date.
func (s *series) parseOriginalStart(v string) (time.Time, error) {
	if s.allDay {
		if t, err := time.Parse("2006-01-02", v); err == nil {
			return t, nil
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return time.Time{}, err
		}
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid originalStart %q", v)
	}
	return t.In(s.loc), nil
}
