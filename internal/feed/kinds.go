package feed

import (
	"maps"
	"strings"

	ical "github.com/arran4/golang-ical"
)

// timeKind is how a DATE-TIME value names its instant.
type timeKind int

const (
	kindDate     timeKind = iota // a DATE: not a date-time
	kindFloating                 // no TZID, no Z: a wall clock in no zone
	kindUTC                      // a trailing Z, no TZID
	kindZoned                    // a TZID (with or without a Z)
)

func kindOf(pr *ical.IANAProperty) timeKind {
	v := strings.TrimSpace(pr.Value)
	switch {
	case strings.EqualFold(param(pr, "VALUE"), "DATE") || len(v) == 8:
		return kindDate
	case param(pr, "TZID") != "":
		return kindZoned
	case strings.HasSuffix(v, "Z") || strings.HasSuffix(v, "z"):
		return kindUTC
	}
	return kindFloating
}

// alignKinds reads a floating DTSTART or DTEND in the zone of the other
// when that one names a zone (a TZID, or UTC by its Z): producers that mix
// the two mean one clock, and reading the floating one in the feed's
// default zone instead puts the event hours short or shifted. This is the
// reading python-icalendar and khal take. A floating RECURRENCE-ID beside
// a DTSTART so aligned follows it (its value type is DTSTART's). Both
// floating, both aware, or a DATE on either side: nothing changes.
func (p *parser) alignKinds(r *rawEvent) {
	st, en := r.single[pDTStart], r.single[pDTEnd]
	if st == nil || en == nil {
		return
	}
	sk, ek := kindOf(st), kindOf(en)
	switch {
	case sk == kindFloating && (ek == kindZoned || ek == kindUTC):
		r.single[pDTStart] = p.inZoneOf(st, en)
		if rid := r.single[pRecurrenceID]; rid != nil && kindOf(rid) == kindFloating {
			r.single[pRecurrenceID] = p.inZoneOf(rid, en)
		}
	case ek == kindFloating && (sk == kindZoned || sk == kindUTC):
		r.single[pDTEnd] = p.inZoneOf(en, st)
	}
}

// inZoneOf is a copy of the floating value naive in the zone of other: its
// TZID, or UTC.
func (p *parser) inZoneOf(naive, other *ical.IANAProperty) *ical.IANAProperty {
	out := &ical.IANAProperty{BaseProperty: ical.BaseProperty{IANAToken: naive.IANAToken,
		ICalParameters: maps.Clone(naive.ICalParameters), Value: strings.TrimSpace(naive.Value)}}
	if tzid := param(other, "TZID"); tzid != "" {
		if out.ICalParameters == nil {
			out.ICalParameters = map[string][]string{}
		}
		out.ICalParameters["TZID"] = []string{tzid}
		p.noteYear(out)
	} else {
		out.Value += "Z"
	}
	return out
}
