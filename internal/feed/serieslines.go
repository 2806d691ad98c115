package feed

import (
	"slices"
	"strconv"
	"time"
)

// A series written back as Recurrence lines, and cut in two.

// Lines renders the series as Recurrence lines, as Parse writes them.
func (s *Series) Lines() []string {
	var lines []string
	if s.hasRule {
		var bound string
		switch {
		case !s.until.IsZero() && s.start.AllDay:
			bound = "UNTIL=" + s.until.Format("20060102")
		case !s.until.IsZero():
			bound = "UNTIL=" + s.until.UTC().Format("20060102T150405Z")
		case s.count > 0:
			bound = "COUNT=" + strconv.Itoa(s.count)
		}
		at := s.boundAt
		if at < 0 || at > len(s.parts) {
			at = len(s.parts)
		}
		n := len("RRULE:") + len(bound) + len(s.parts)
		for _, p := range s.parts {
			n += len(p)
		}
		b := make([]byte, 0, n)
		b = append(b, "RRULE:"...)
		first := true
		sep := func() { // strings.Join's separator, parts empty or not
			if !first {
				b = append(b, ';')
			}
			first = false
		}
		for i, p := range s.parts {
			if i == at && bound != "" {
				sep()
				b = append(b, bound...)
			}
			sep()
			b = append(b, p...)
		}
		if at == len(s.parts) && bound != "" {
			sep()
			b = append(b, bound...)
		}
		lines = make([]string, 0, 3)
		lines = append(lines, string(b))
	}
	if len(s.rdates) > 0 {
		lines = append(lines, dateLine("RDATE", s.start, sortedTimes(s.rdates)))
	}
	if len(s.exdates) > 0 {
		lines = append(lines, dateLine("EXDATE", s.start, sortedTimes(s.exdates)))
	}
	return lines
}

// sortedTimes is ts sorted: ts itself when it already is (the parser
// sorts its dates), else a sorted copy.
func sortedTimes(ts []time.Time) []time.Time {
	cmp := func(a, b time.Time) int { return a.Compare(b) }
	if slices.IsSortedFunc(ts, cmp) {
		return ts
	}
	return slices.SortedFunc(slices.Values(ts), cmp)
}

// Before returns the part of the series before cut: its rule ends just
// before cut (UNTIL replaces COUNT, which counted the occurrences before
// cut anyway), and its later RDATEs and EXDATEs are dropped. ok is false
// when nothing is left (cut is the first occurrence).
func (s *Series) Before(cut time.Time) (*Series, bool) {
	if !s.start.T.Before(cut) {
		return nil, false
	}
	out := *s
	out.parts = slices.Clone(s.parts)
	if out.hasRule && (out.until.IsZero() || !out.until.Before(cut)) {
		out.count = 0
		if s.start.AllDay {
			out.until = cut.AddDate(0, 0, -1)
		} else {
			out.until = cut.Add(-time.Second)
		}
	}
	out.rdates = filterTimes(s.rdates, time.Time{}, cut)
	out.exdates = filterTimes(s.exdates, time.Time{}, cut)
	return &out, true
}

// filterTimes keeps the times in [from, to) (zero bounds are open).
func filterTimes(ts []time.Time, from, to time.Time) []time.Time {
	var out []time.Time
	for _, t := range ts {
		if (from.IsZero() || !t.Before(from)) && (to.IsZero() || t.Before(to)) {
			out = append(out, t)
		}
	}
	return out
}
