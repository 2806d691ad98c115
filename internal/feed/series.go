package feed

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/teambition/rrule-go"

	"github.com/calsyncd/calsyncd/internal/tz"
)

// Series is the recurrence set of a master event, read back from its
// Recurrence lines: what a consumer needs to expand it, to find whether a
// time is one of its occurrences, or to cut it in two (RANGE=THISANDFUTURE).
// Occurrences are identified by their original start: an instant, or for
// an all-day series midnight UTC of its date.
type Series struct {
	start Time
	loc   *time.Location
	// parts are the RRULE's parts other than COUNT and UNTIL, as written,
	// and boundAt where COUNT or UNTIL stood among them (-1: at the end);
	// hasRule is false for a series of RDATEs only.
	parts   []string
	boundAt int
	hasRule bool
	count   int
	// until bounds the rule, inclusive (zero: none).
	until   time.Time
	rdates  []time.Time
	exdates []time.Time
}

// newSeries is an empty series starting at start.
func newSeries(start Time) *Series {
	s := &Series{start: start, loc: start.T.Location(), boundAt: -1}
	if start.AllDay {
		s.loc = time.UTC
	}
	return s
}

// seriesOf is the series the parser read: its RRULE value as Google takes
// it ("" when none) and its RDATE and EXDATE instants, sorted. The rule
// is rruleValue's, which rrule-go has already read whole: it is not built
// again here.
func seriesOf(start Time, rule string, rdates, exdates []time.Time) (*Series, error) {
	s := newSeries(start)
	if rule != "" {
		if err := s.readParts(rule); err != nil {
			return nil, err
		}
	}
	s.rdates, s.exdates = rdates, exdates
	return s, nil
}

// ParseSeries reads a master's recurrence from its lines (the parser
// itself puts the series it read on the event: Event.Series). It fails
// when ev is not recurring or its lines are not in the form this package
// writes.
func ParseSeries(ev *Event) (*Series, error) {
	if !ev.IsRecurring() {
		return nil, errors.New("feed: not a recurring event")
	}
	s := newSeries(ev.Start)
	for _, line := range ev.Recurrence {
		head, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("feed: recurrence line %q", line)
		}
		name, _, _ := strings.Cut(head, ";")
		switch name {
		case "RRULE":
			if err := s.readRule(value); err != nil {
				return nil, err
			}
		case "RDATE", "EXDATE":
			ts, err := s.readDates(head, value)
			if err != nil {
				return nil, err
			}
			if name == "RDATE" {
				s.rdates = ts
			} else {
				s.exdates = ts
			}
		}
	}
	return s, nil
}

// readRule reads an RRULE value and checks that rrule-go can build it.
func (s *Series) readRule(value string) error {
	if err := s.readParts(value); err != nil {
		return err
	}
	if _, err := s.rule(); err != nil {
		return err
	}
	return nil
}

// readParts reads an RRULE value's parts, its COUNT and its UNTIL.
func (s *Series) readParts(value string) error {
	s.hasRule = true
	for part := range strings.SplitSeq(value, ";") {
		k, v, _ := strings.Cut(part, "=")
		if k == "COUNT" || k == "UNTIL" {
			s.boundAt = len(s.parts)
		}
		switch k {
		case "COUNT":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fmt.Errorf("feed: invalid COUNT %q", v)
			}
			s.count = n
		case "UNTIL":
			var (
				t   time.Time
				err error
			)
			if len(v) == 8 {
				t, err = time.Parse("20060102", v)
				if !s.start.AllDay {
					t = time.Date(t.Year(), t.Month(), t.Day(), 23, 59, 59, 0, s.loc)
				}
			} else {
				t, err = time.Parse("20060102T150405Z", v)
			}
			if err != nil {
				return fmt.Errorf("feed: invalid UNTIL %q", v)
			}
			s.until = t
		default:
			s.parts = append(s.parts, part)
		}
	}
	return nil
}

func (s *Series) readDates(head, value string) ([]time.Time, error) {
	loc := s.loc
	if _, tz, ok := strings.Cut(head, ";TZID="); ok {
		l, err := time.LoadLocation(tz)
		if err != nil {
			return nil, fmt.Errorf("feed: recurrence zone %q: %w", tz, err)
		}
		loc = l
	}
	var ts []time.Time
	for v := range strings.SplitSeq(value, ",") {
		var (
			t   time.Time
			err error
		)
		switch {
		case len(v) == 8:
			t, err = time.Parse("20060102", v)
		case strings.HasSuffix(v, "Z"):
			t, err = time.Parse("20060102T150405Z", v)
		default:
			t, err = time.ParseInLocation("20060102T150405", v, loc)
		}
		if err != nil {
			return nil, fmt.Errorf("feed: recurrence date %q", v)
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// rule builds the RRULE anchored at the series' start, or nil.
func (s *Series) rule() (*rrule.RRule, error) {
	opt, err := s.ruleOptions()
	if opt == nil || err != nil {
		return nil, err
	}
	return rrule.NewRRule(*opt)
}

// wallRule is the rule expanded on the wall clock (as UTC fields), as RFC
// 5545 expands it: its occurrences are placed in the series' zone by
// tz.At, so one that falls in a daylight-saving gap is read with the
// offset before the gap, not as Go's time.Date would place it.
func (s *Series) wallRule() (*rrule.RRule, error) {
	opt, err := s.ruleOptions()
	if opt == nil || err != nil {
		return nil, err
	}
	if s.loc != time.UTC {
		opt.Dtstart = wallOf(opt.Dtstart.In(s.loc))
		if !opt.Until.IsZero() {
			opt.Until = wallOf(opt.Until.In(s.loc))
		}
	}
	return rrule.NewRRule(*opt)
}

// ruleOptions are the RRULE's options anchored at the series' start (nil
// without a rule).
func (s *Series) ruleOptions() (*rrule.ROption, error) {
	if !s.hasRule {
		return nil, nil
	}
	opt, err := rrule.StrToROption(strings.Join(s.parts, ";"))
	if err != nil {
		return nil, fmt.Errorf("feed: invalid RRULE: %w", err)
	}
	opt.Dtstart = s.start.T.In(s.loc)
	opt.Count = s.count
	if !s.until.IsZero() {
		opt.Until = s.until
		if s.start.AllDay {
			opt.Until = s.until.Add(24*time.Hour - time.Second)
		}
	}
	return opt, nil
}

// Start is the series' first occurrence (DTSTART).
func (s *Series) Start() Time { return s.start }

// Frequency is the rule's FREQ ("WEEKLY"), "" for a series of RDATEs.
func (s *Series) Frequency() string {
	for _, part := range s.parts {
		if v, ok := strings.CutPrefix(part, "FREQ="); ok {
			return v
		}
	}
	return ""
}

// Occurrences returns an iterator over the original starts of the series
// in order, without duplicates and excluded dates. DTSTART is always the
// first occurrence and counts towards COUNT (RFC 5545), whether or not the
// rule produces it. An endless series stops after max occurrences.
func (s *Series) Occurrences(max int) func() (time.Time, bool) {
	next := s.raw(true)
	n := 0
	return func() (time.Time, bool) {
		for n < max {
			t, ok := next()
			if !ok {
				return time.Time{}, false
			}
			if s.excluded(t) {
				continue
			}
			n++
			return t, true
		}
		return time.Time{}, false
	}
}

// ruleTimes iterates what the rule alone produces, in order: DTSTART only
// when the rule produces it, and COUNT counting the rule's own occurrences
// (an EXRULE, read as RFC 2445 and its implementations read it). RDATEs
// and EXDATEs play no part.
func (s *Series) ruleTimes() func() (time.Time, bool) {
	r, err := s.wallRule()
	if err != nil || r == nil {
		return func() (time.Time, bool) { return time.Time{}, false }
	}
	next := r.Iterator()
	return func() (time.Time, bool) {
		t, ok := next()
		if ok && s.loc != time.UTC {
			t = tz.At(t, s.loc)
		}
		return t, ok
	}
}

// raw iterates DTSTART, the rule and (with rdates) the RDATEs merged, with
// excluded dates still in.
func (s *Series) raw(rdates bool) func() (time.Time, bool) {
	start := s.start.T
	ruleNext := s.countedRule()
	var extra []time.Time
	if rdates {
		extra = slices.SortedFunc(slices.Values(s.rdates), func(a, b time.Time) int { return a.Compare(b) })
	}
	pending := []time.Time{start}
	ruleT, ruleOK := ruleNext()
	var last time.Time
	first := true
	return func() (time.Time, bool) {
		for {
			// The smallest of DTSTART, the rule's next and the next RDATE.
			var cand time.Time
			src := -1
			if len(pending) > 0 {
				cand, src = pending[0], 0
			}
			if ruleOK && (src < 0 || ruleT.Before(cand)) {
				cand, src = ruleT, 1
			}
			if len(extra) > 0 && (src < 0 || extra[0].Before(cand)) {
				cand, src = extra[0], 2
			}
			switch src {
			case -1:
				return time.Time{}, false
			case 0:
				pending = pending[1:]
			case 1:
				ruleT, ruleOK = ruleNext()
			case 2:
				extra = extra[1:]
			}
			if !first && !cand.After(last) {
				continue
			}
			first, last = false, cand
			return cand, true
		}
	}
}

// countedRule iterates the rule's occurrences in the series' zone, its
// COUNT counting DTSTART when the rule does not produce it (DTSTART takes
// the first place); it yields nothing for a series without a rule.
func (s *Series) countedRule() func() (time.Time, bool) {
	r, err := s.wallRule()
	if err != nil || r == nil {
		return func() (time.Time, bool) { return time.Time{}, false }
	}
	start := s.start.T
	wallIt := r.Iterator()
	it := func() (time.Time, bool) {
		t, ok := wallIt()
		if ok && s.loc != time.UTC {
			t = tz.At(t, s.loc)
		}
		return t, ok
	}
	limit, n := -1, 0
	if s.count > 0 {
		limit = s.count
	}
	return func() (time.Time, bool) {
		t, ok := it()
		if !ok {
			return t, false
		}
		if n == 0 && !t.Equal(start) && limit > 0 {
			limit-- // DTSTART took the first place
		}
		n++
		if limit >= 0 && n > limit {
			return time.Time{}, false
		}
		return t, true
	}
}

func (s *Series) excluded(t time.Time) bool {
	for _, x := range s.exdates {
		if x.Equal(t) {
			return true
		}
	}
	return false
}

// maxWalk bounds how far Has and CountBefore walk a series.
const maxWalk = maxExpansion

// Has reports whether t is the original start of an occurrence (an
// excluded date is none).
func (s *Series) Has(t time.Time) bool {
	next := s.Occurrences(maxWalk)
	for {
		o, ok := next()
		if !ok || o.After(t) {
			return false
		}
		if o.Equal(t) {
			return true
		}
	}
}

// ruleHas reports whether t is produced by DTSTART or the rule (not only
// by an RDATE), excluded or not.
func (s *Series) ruleHas(t time.Time) bool {
	next := s.raw(false)
	for n := 0; n < maxWalk; n++ {
		o, ok := next()
		if !ok || o.After(t) {
			return false
		}
		if o.Equal(t) {
			return true
		}
	}
	return false
}

// countBefore counts the occurrences of DTSTART and the rule before t,
// excluded ones included (they count towards COUNT).
func (s *Series) countBefore(t time.Time) int {
	next := s.raw(false)
	n := 0
	for n < maxWalk {
		o, ok := next()
		if !ok || !o.Before(t) {
			break
		}
		n++
	}
	return n
}
