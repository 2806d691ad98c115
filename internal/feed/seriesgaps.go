package feed

import (
	"strings"
	"time"

	"github.com/calsyncd/calsyncd/internal/tz"
)

// Where Google may place a series' occurrences otherwise than RFC 5545
// does: in a daylight-saving gap, or in a zone Google cannot name.

// GapOccurrence reports whether the rule puts an occurrence that starts
// in [from, to) on a wall-clock time its zone skips (a daylight-saving
// gap). RFC 5545 reads it with the offset before the gap; where Google
// places it is undocumented, so such a series is written as single
// events. An endless series is walked up to to.
func (s *Series) GapOccurrence(from, to time.Time) bool {
	if s.start.AllDay || s.loc == time.UTC || !s.hasRule {
		return false
	}
	if !s.subDaily() && !s.gapAtStartTime(from, to) {
		// Every occurrence is at DTSTART's time of day, and no gap in
		// the window skips it: no walk needed (nearly every series).
		return false
	}
	r, err := s.wallRule()
	if err != nil || r == nil {
		return false
	}
	next := r.Iterator()
	for n := 0; n < maxWalk; n++ {
		w, ok := next()
		if !ok {
			return false
		}
		t := tz.At(w, s.loc)
		if !t.Before(to) {
			return false
		}
		if t.Before(from) {
			continue
		}
		if l := t.In(s.loc); l.Hour() != w.Hour() || l.Minute() != w.Minute() || l.Day() != w.Day() {
			return true
		}
	}
	return false
}

// subDaily reports whether the rule places occurrences at other times of
// day than DTSTART's (a sub-daily FREQ, BYHOUR, BYMINUTE or BYSECOND).
func (s *Series) subDaily() bool {
	for _, part := range s.parts {
		k, v, _ := strings.Cut(part, "=")
		switch {
		case k == "BYHOUR" || k == "BYMINUTE" || k == "BYSECOND":
			return true
		case k == "FREQ" && (v == "HOURLY" || v == "MINUTELY" || v == "SECONDLY"):
			return true
		}
	}
	return false
}

// gapAtStartTime reports whether a daylight-saving gap within [from, to)
// skips DTSTART's wall-clock time of day on its night.
func (s *Series) gapAtStartTime(from, to time.Time) bool {
	st := s.start.T.In(s.loc)
	for t := from; t.Before(to); {
		_, end := t.In(s.loc).ZoneBounds()
		if end.IsZero() || !end.After(t) || !end.Before(to) {
			return false
		}
		_, before := end.Add(-time.Second).In(s.loc).Zone()
		_, after := end.In(s.loc).Zone()
		if after > before {
			// The skipped wall clock is [end+before, end+after).
			lo := wallOf(end.Add(time.Duration(before) * time.Second).UTC())
			hi := wallOf(end.Add(time.Duration(after) * time.Second).UTC())
			for _, d := range []time.Time{lo, hi} {
				w := time.Date(d.Year(), d.Month(), d.Day(), st.Hour(), st.Minute(), st.Second(), 0, time.UTC)
				if !w.Before(lo) && w.Before(hi) {
					return true
				}
			}
		}
		t = end
	}
	return false
}

// UnnamedZoneShifts reports whether the series is in a zone Google cannot
// name (a feed's own VTIMEZONE that matches no IANA zone: Start().Zone is
// "" but the times are not UTC) whose offset changes within [from, to).
// Google would expand such a series in UTC, its occurrences an hour off
// for part of the year, so it is written as single events.
func (s *Series) UnnamedZoneShifts(from, to time.Time) bool {
	if s.start.AllDay || s.start.Zone != "" || s.loc == time.UTC {
		return false
	}
	if from.Before(s.start.T) {
		from = s.start.T
	}
	for t := from; t.Before(to); {
		_, end := t.In(s.loc).ZoneBounds()
		if end.IsZero() || !end.After(t) {
			return false
		}
		if end.Before(to) {
			_, a := t.In(s.loc).Zone()
			_, b := end.In(s.loc).Zone()
			if a != b {
				return true
			}
		}
		t = end
	}
	return false
}

// wallOf is t's wall clock as UTC fields.
func wallOf(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}
