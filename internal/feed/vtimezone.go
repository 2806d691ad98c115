package feed

import (
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"

	ical "github.com/arran4/golang-ical"
	"github.com/teambition/rrule-go"
)

// vtimezone is a feed's own time zone definition: observances (STANDARD and
// DAYLIGHT) that each switch the UTC offset at onsets given by DTSTART,
// RRULE and RDATE.
type vtimezone struct {
	tzid string
	obs  []observance
	// transitions are every onset up to horizon, sorted.
	transitions []transition
	horizon     time.Time
	// before is the offset in force before the first onset.
	before int
}

type observance struct {
	start    time.Time // wall clock, as UTC fields
	from, to int       // seconds east of UTC
	rule     *rrule.ROption
	rdates   []time.Time // wall clock
}

type transition struct {
	at     time.Time // instant
	offset int
}

// maxTransitions bounds the onsets one VTIMEZONE may produce (a hostile
// RRULE must not exhaust memory).
const maxTransitions = 20000

// parseVTimezone reads a VTIMEZONE component. It returns the TZIDs it
// declares (a malformed one may declare several) and the rules.
func parseVTimezone(c ical.Component) ([]string, *vtimezone, error) {
	var ids []string
	for _, p := range c.UnknownPropertiesIANAProperties() {
		if p.IANAToken == "TZID" {
			if id := strings.TrimSpace(p.Value); id != "" {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil, errors.New("VTIMEZONE without TZID")
	}
	vz := &vtimezone{tzid: ids[0]}
	for _, sub := range c.SubComponents() {
		var props []ical.IANAProperty
		switch s := sub.(type) {
		case *ical.Standard:
			props = s.Properties
		case *ical.Daylight:
			props = s.Properties
		default:
			continue
		}
		var o observance
		var haveStart, haveTo bool
		var rule string
		fromSet := false
		for _, p := range props {
			switch p.IANAToken {
			case "DTSTART":
				t, err := parseWall(p.Value)
				if err != nil {
					return ids, nil, err
				}
				o.start, haveStart = t, true
			case "TZOFFSETFROM":
				off, err := parseUTCOffset(p.Value)
				if err != nil {
					return ids, nil, err
				}
				o.from, fromSet = off, true
			case "TZOFFSETTO":
				off, err := parseUTCOffset(p.Value)
				if err != nil {
					return ids, nil, err
				}
				o.to, haveTo = off, true
			case "RRULE":
				rule = p.Value
			case "RDATE":
				for _, v := range strings.Split(p.Value, ",") {
					if i := strings.IndexByte(v, '/'); i >= 0 {
						v = v[:i]
					}
					t, err := parseWall(v)
					if err == nil {
						o.rdates = append(o.rdates, t)
					}
				}
			}
		}
		if !haveStart || !haveTo {
			return ids, nil, errors.New("VTIMEZONE observance without DTSTART or TZOFFSETTO")
		}
		if !fromSet {
			o.from = o.to
		}
		if rule != "" {
			opt, err := parseRRule(rule)
			if err != nil {
				return ids, nil, err
			}
			opt.Dtstart = o.start
			if o.start.Year() < 1900 && opt.Count == 0 && opt.Interval <= 1 {
				// Outlook starts its rules in 1601; rrule-go measures spans
				// as time.Duration, which overflows after 292 years. A rule
				// without COUNT or INTERVAL yields the same onsets from 1900.
				opt.Dtstart = time.Date(1900, o.start.Month(), o.start.Day(), o.start.Hour(), o.start.Minute(), o.start.Second(), 0, time.UTC)
			}
			if !opt.Until.IsZero() {
				// UNTIL is UTC; compare it as wall clock in the old offset.
				opt.Until = opt.Until.Add(time.Duration(o.from) * time.Second)
			}
			o.rule = opt
		}
		vz.obs = append(vz.obs, o)
	}
	if len(vz.obs) == 0 {
		return ids, nil, errors.New("VTIMEZONE without STANDARD or DAYLIGHT")
	}
	return ids, vz, nil
}

// parseWall reads a DATE-TIME (or DATE) as wall-clock fields in UTC.
func parseWall(v string) (time.Time, error) {
	v = strings.TrimSuffix(strings.TrimSpace(v), "Z")
	t, date, err := parseICalTime(v)
	if err != nil {
		return time.Time{}, err
	}
	_ = date
	return t, nil
}

// parseUTCOffset reads "+0100", "-0530", "+013000".
func parseUTCOffset(v string) (int, error) {
	v = strings.TrimSpace(v)
	if len(v) != 5 && len(v) != 7 || (v[0] != '+' && v[0] != '-') {
		return 0, errors.New("invalid UTC offset " + strconv.Quote(v))
	}
	n := 0
	for i := 1; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, errors.New("invalid UTC offset " + strconv.Quote(v))
		}
	}
	h, _ := strconv.Atoi(v[1:3])
	m, _ := strconv.Atoi(v[3:5])
	s := 0
	if len(v) == 7 {
		s, _ = strconv.Atoi(v[5:7])
	}
	n = h*3600 + m*60 + s
	if h > 23 || m > 59 || s > 59 {
		return 0, errors.New("invalid UTC offset " + strconv.Quote(v))
	}
	if v[0] == '-' {
		n = -n
	}
	return n, nil
}

// prepare computes the onsets up to horizon.
func (vz *vtimezone) prepare(horizon time.Time) {
	if !vz.horizon.IsZero() && !horizon.After(vz.horizon) {
		return
	}
	vz.horizon = horizon
	vz.transitions = vz.transitions[:0]
	for _, o := range vz.obs {
		add := func(wall time.Time) {
			vz.transitions = append(vz.transitions, transition{at: wall.Add(-time.Duration(o.from) * time.Second), offset: o.to})
		}
		add(o.start)
		for _, d := range o.rdates {
			add(d)
		}
		if o.rule != nil && len(vz.transitions) < maxTransitions {
			r, err := rrule.NewRRule(*o.rule)
			if err != nil {
				continue
			}
			next := r.Iterator()
			for n := 0; n < maxTransitions; n++ {
				t, ok := next()
				if !ok || t.After(horizon) {
					break
				}
				if !t.Equal(o.start) {
					add(t)
				}
			}
		}
	}
	sort.SliceStable(vz.transitions, func(i, j int) bool { return vz.transitions[i].at.Before(vz.transitions[j].at) })
	vz.before = vz.obs[0].from
	if len(vz.transitions) > 0 {
		// The offset before the first onset is what that onset switches from.
		first := vz.transitions[0].at
		for _, o := range vz.obs {
			if o.start.Add(-time.Duration(o.from) * time.Second).Equal(first) {
				vz.before = o.from
				break
			}
		}
	}
}

// offsetAt is the UTC offset the definition gives at instant t.
func (vz *vtimezone) offsetAt(t time.Time) int {
	if t.After(vz.horizon) {
		vz.prepare(t.AddDate(5, 0, 0))
	}
	i := sort.Search(len(vz.transitions), func(i int) bool { return vz.transitions[i].at.After(t) })
	if i == 0 {
		return vz.before
	}
	return vz.transitions[i-1].offset
}

// toUTC converts a wall-clock time (as UTC fields) to the instant.
func (vz *vtimezone) toUTC(wall time.Time) time.Time {
	guess := wall.Add(-time.Duration(vz.offsetAt(wall)) * time.Second)
	return wall.Add(-time.Duration(vz.offsetAt(guess)) * time.Second)
}

// matches reports whether loc keeps the same UTC offsets as the definition
// over [from, to): at every transition of either, and mid-month throughout.
func (vz *vtimezone) matches(loc *time.Location, from, to time.Time) bool {
	vz.prepare(to)
	same := func(t time.Time) bool {
		_, off := t.In(loc).Zone()
		return off == vz.offsetAt(t)
	}
	// A quick rejection on a few samples first: most candidates fail here.
	for m := 1; m <= 12; m += 3 {
		if !same(time.Date(from.Year(), time.Month(m), 15, 12, 0, 0, 0, time.UTC)) {
			return false
		}
	}
	for t := from; t.Before(to); t = t.AddDate(0, 1, 0) {
		if !same(t) {
			return false
		}
	}
	// Around each transition, a few seconds either side: Windows writes
	// midnight switches as 23:59:59.
	const slack = 3 * time.Second
	i := sort.Search(len(vz.transitions), func(i int) bool { return !vz.transitions[i].at.Before(from) })
	for ; i < len(vz.transitions) && vz.transitions[i].at.Before(to); i++ {
		at := vz.transitions[i].at
		if !same(at.Add(slack)) || !same(at.Add(-slack)) {
			return false
		}
	}
	for t := from; t.Before(to); {
		_, end := t.In(loc).ZoneBounds()
		if end.IsZero() || !end.After(t) {
			break
		}
		if end.Before(to) && (!same(end.Add(slack)) || !same(end.Add(-slack))) {
			return false
		}
		t = end
	}
	return true
}
