package tz

import (
	"sort"
	"time"

	"github.com/teambition/rrule-go"
)

// Definition is a feed's own time zone (a VTIMEZONE): observances
// (STANDARD and DAYLIGHT) that each switch the UTC offset at onsets given by
// a start, a rule and extra dates.
type Definition struct {
	tzid string
	obs  []Observance
	// transitions are every onset up to horizon, sorted.
	transitions []transition
	horizon     time.Time
	// before is the offset in force before the first onset.
	before int
}

// Observance is one STANDARD or DAYLIGHT part of a Definition.
type Observance struct {
	Start    time.Time // wall clock, as UTC fields
	From, To int       // seconds east of UTC
	// Rule repeats the onset (Dtstart set, UNTIL as wall clock in From);
	// nil when it does not repeat.
	Rule   *rrule.ROption
	RDates []time.Time // more onsets, wall clock
}

type transition struct {
	at     time.Time // instant
	offset int
}

// NewDefinition returns the rules of the VTIMEZONE tzid.
func NewDefinition(tzid string, obs []Observance) *Definition {
	return &Definition{tzid: tzid, obs: obs}
}

// maxTransitions bounds the onsets one VTIMEZONE may produce (a hostile
// RRULE must not exhaust memory).
const maxTransitions = 20000

// prepare computes the onsets up to horizon.
func (vz *Definition) prepare(horizon time.Time) {
	if !vz.horizon.IsZero() && !horizon.After(vz.horizon) {
		return
	}
	vz.horizon = horizon
	vz.transitions = vz.transitions[:0]
	for _, o := range vz.obs {
		add := func(wall time.Time) {
			vz.transitions = append(vz.transitions, transition{at: wall.Add(-time.Duration(o.From) * time.Second), offset: o.To})
		}
		add(o.Start)
		for _, d := range o.RDates {
			add(d)
		}
		if o.Rule != nil && len(vz.transitions) < maxTransitions {
			next, ok := onsets(o.Rule)
			if !ok {
				continue
			}
			for n := 0; n < maxTransitions; n++ {
				t, ok := next()
				if !ok || t.After(horizon) {
					break
				}
				if !t.Equal(o.Start) {
					add(t)
				}
			}
		}
	}
	sort.SliceStable(vz.transitions, func(i, j int) bool { return vz.transitions[i].at.Before(vz.transitions[j].at) })
	vz.before = vz.obs[0].From
	if len(vz.transitions) > 0 {
		// The offset before the first onset is what that onset switches from.
		first := vz.transitions[0].at
		for _, o := range vz.obs {
			if o.Start.Add(-time.Duration(o.From) * time.Second).Equal(first) {
				vz.before = o.From
				break
			}
		}
	}
}

// offsetAt is the UTC offset the definition gives at instant t.
func (vz *Definition) offsetAt(t time.Time) int {
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
func (vz *Definition) toUTC(wall time.Time) time.Time {
	return fromWall(wall, vz.offsetAt)
}

// matches reports whether loc keeps the same UTC offsets as the definition
// over [from, to): at every transition of either (a few seconds either
// side: Windows writes midnight switches as 23:59:59), and mid-month
// throughout.
func (vz *Definition) matches(loc *time.Location, from, to time.Time) bool {
	const slack = 3 * time.Second
	return vz.sameOffsets(loc, from, to, slack)
}

// nearSlack is how far apart a definition's and an IANA zone's onsets may
// be and still be the same switch: exporters write a night's switch at
// 01:00, 02:00 or 03:00, or at 23:59:59 for midnight.
const nearSlack = 6 * time.Hour

// near reports whether loc keeps the definition's offsets over [from, to)
// away from transition nights: mid-month throughout, and either side of
// every onset of each, nearSlack away. Such a VTIMEZONE is the IANA zone
// written with its switches at another hour (US Eastern switching at
// 01:00 and 03:00), not another zone.
func (vz *Definition) near(loc *time.Location, from, to time.Time) bool {
	return vz.sameOffsets(loc, from, to, nearSlack)
}

// sameOffsets reports whether loc keeps the definition's offsets over
// [from, to) mid-month throughout and slack either side of every
// transition of each.
func (vz *Definition) sameOffsets(loc *time.Location, from, to time.Time, slack time.Duration) bool {
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
