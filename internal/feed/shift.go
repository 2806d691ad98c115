package feed

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Shift is a wall-clock move in a series' zone: whole days, then a clock
// difference. A RANGE=THISANDFUTURE override moves every later occurrence
// by the shift from its RECURRENCE-ID to its DTSTART.
type Shift struct {
	loc   *time.Location
	days  int
	clock time.Duration
}

// ShiftBetween is the wall-clock shift from an original start to a new one.
func (s *Series) ShiftBetween(orig time.Time, to Time) Shift {
	a, b := orig.In(s.loc), to.T.In(s.loc)
	da := time.Date(a.Year(), a.Month(), a.Day(), 0, 0, 0, 0, time.UTC)
	db := time.Date(b.Year(), b.Month(), b.Day(), 0, 0, 0, 0, time.UTC)
	clockA := time.Duration(a.Hour())*time.Hour + time.Duration(a.Minute())*time.Minute + time.Duration(a.Second())*time.Second
	clockB := time.Duration(b.Hour())*time.Hour + time.Duration(b.Minute())*time.Minute + time.Duration(b.Second())*time.Second
	return Shift{loc: s.loc, days: int(db.Sub(da).Hours()+12) / 24, clock: clockB - clockA}
}

// Apply moves t by the shift.
func (sh Shift) Apply(t time.Time) time.Time {
	if sh.loc == nil {
		return t
	}
	w := t.In(sh.loc)
	return time.Date(w.Year(), w.Month(), w.Day()+sh.days, w.Hour(), w.Minute(), w.Second(), 0, sh.loc).Add(sh.clock)
}

// From returns the occurrences of the series from cut (an occurrence of
// its rule) up to end (excluded; zero: the series' end), moved by sh, as a
// series of its own starting at sh.Apply(cut). ok is false when no rule
// anchored at the new start produces exactly those occurrences: a shift
// across days of a rule that selects days (other than a weekly BYDAY,
// whose days move along), or a cut that only an RDATE produces.
func (s *Series) From(cut, end time.Time, sh Shift) (*Series, bool) {
	if s.hasRule && !s.ruleHas(cut) {
		return nil, false
	}
	out := &Series{start: s.start, loc: s.loc, hasRule: s.hasRule, until: s.until, boundAt: s.boundAt}
	out.start.T = sh.Apply(cut)
	if s.start.AllDay && sh.clock != 0 {
		return nil, false
	}
	if s.hasRule {
		parts, ok := shiftParts(s.parts, sh)
		if !ok {
			return nil, false
		}
		out.parts = parts
		if s.count > 0 {
			out.count = s.count - s.countBefore(cut)
		}
		if !s.until.IsZero() {
			out.until = sh.Apply(s.until)
			if s.start.AllDay {
				out.until = s.until.AddDate(0, 0, sh.days)
			}
		}
		if !end.IsZero() && (out.until.IsZero() || !out.until.Before(sh.Apply(end))) {
			out.count = 0
			if s.start.AllDay {
				out.until = sh.Apply(end).AddDate(0, 0, -1)
			} else {
				out.until = sh.Apply(end).Add(-time.Second)
			}
		}
	}
	for _, t := range filterTimes(s.rdates, cut, end) {
		if !t.Equal(cut) {
			out.rdates = append(out.rdates, sh.Apply(t))
		}
	}
	for _, t := range filterTimes(s.exdates, cut, end) {
		out.exdates = append(out.exdates, sh.Apply(t))
	}
	return out, true
}

// shiftParts moves a rule's day selection by sh's days, when it can be.
func shiftParts(parts []string, sh Shift) ([]string, bool) {
	byParts := map[string]string{}
	freq, interval := "", 1
	for _, p := range parts {
		k, v, _ := strings.Cut(p, "=")
		switch k {
		case "FREQ":
			freq = v
		case "INTERVAL":
			interval, _ = strconv.Atoi(v)
		case "WKST":
		default:
			byParts[k] = v
		}
	}
	for _, k := range []string{"BYHOUR", "BYMINUTE", "BYSECOND"} {
		if _, ok := byParts[k]; ok && sh.clock != 0 {
			return nil, false
		}
	}
	if sh.days == 0 {
		return slices.Clone(parts), true
	}
	switch {
	case freq == "DAILY" && len(byParts) == 0:
		return slices.Clone(parts), true
	case freq == "WEEKLY" && interval <= 1 && len(byParts) == 0:
		return slices.Clone(parts), true
	case freq == "WEEKLY" && interval <= 1 && len(byParts) == 1 && byParts["BYDAY"] != "":
		days := byParts["BYDAY"]
		out := slices.Clone(parts)
		var moved []string
		for d := range strings.SplitSeq(days, ",") {
			i := slices.Index(weekdayNames, d)
			if i < 0 {
				return nil, false // an ordinal weekday
			}
			moved = append(moved, weekdayNames[((i+sh.days)%7+7)%7])
		}
		for i, p := range out {
			if strings.HasPrefix(p, "BYDAY=") {
				out[i] = "BYDAY=" + strings.Join(moved, ",")
			}
		}
		return out, true
	}
	return nil, false
}

var weekdayNames = []string{"SU", "MO", "TU", "WE", "TH", "FR", "SA"}
