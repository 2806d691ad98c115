package feed

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	ical "github.com/arran4/golang-ical"
	"github.com/teambition/rrule-go"

	"github.com/calsyncd/calsyncd/internal/tz"
)

// rruleParts are the RRULE parts RFC 5545 defines; Google refuses others.
var rruleParts = map[string]bool{
	"FREQ": true, "UNTIL": true, "COUNT": true, "INTERVAL": true, "BYSECOND": true, "BYMINUTE": true,
	"BYHOUR": true, "BYDAY": true, "BYMONTHDAY": true, "BYYEARDAY": true, "BYWEEKNO": true, "BYMONTH": true,
	"BYSETPOS": true, "WKST": true,
}

// parseRRule validates an RRULE value and returns its options (UNTIL read
// as UTC fields, whatever its form).
func parseRRule(v string) (*rrule.ROption, error) {
	return parseNormalisedRRule(normaliseRRule(v))
}

// parseNormalisedRRule is parseRRule on a value normaliseRRule gave.
func parseNormalisedRRule(v string) (*rrule.ROption, error) {
	if v == "" {
		return nil, errors.New("empty RRULE")
	}
	for part := range strings.SplitSeq(v, ";") {
		k, _, ok := strings.Cut(part, "=")
		if !ok || !rruleParts[k] {
			return nil, fmt.Errorf("invalid RRULE part %q", part)
		}
	}
	opt, err := rrule.StrToROption(v)
	if err != nil {
		return nil, fmt.Errorf("invalid RRULE %q: %w", v, err)
	}
	if _, err := rrule.NewRRule(*opt); err != nil {
		return nil, fmt.Errorf("invalid RRULE %q: %w", v, err)
	}
	return opt, nil
}

// maxRuleDays bounds the days one feed's rules are walked to check that
// each matches (neverMatches): about 200 rules that match nothing, a few
// tenths of a second. maxRuleVerdicts bounds the verdicts remembered.
const (
	maxRuleDays     = 40 * cycleDays
	maxRuleVerdicts = 1024
)

// neverMatches is neverMatches within the feed's budget, remembering the
// verdict of each rule and DTSTART (a feed repeats its rules).
func (p *parser) neverMatches(opt rrule.ROption, norm string) string {
	key := norm + "@" + opt.Dtstart.Format("20060102T150405")
	if why, ok := p.verdicts[key]; ok {
		return why
	}
	if p.verdicts == nil {
		p.verdicts, p.ruleDays = map[string]string{}, maxRuleDays
	}
	why := neverMatches(opt, &p.ruleDays)
	if len(p.verdicts) < maxRuleVerdicts {
		p.verdicts[key] = why
	}
	return why
}

// normaliseRRule upper-cases an RRULE value and drops the spaces some
// producers put in lists ("BYDAY=MO, TU") and a trailing ";".
func normaliseRRule(v string) string {
	v = strings.ToUpper(strings.TrimPrefix(strings.TrimSpace(v), "RRULE:"))
	v = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, v)
	return strings.Trim(v, ";")
}

// recurrence turns a master's RRULE, RDATE and EXDATE into the lines
// Google accepts: one RRULE as given but validated, with UNTIL in UTC when
// the series has a time zone (a DATE when it is all-day); RDATE and EXDATE
// values in the series' IANA zone, or in UTC when it has none, sorted into
// one line each so that property order never changes the hash.
func (p *parser) recurrence(ev *Event, r *rawEvent) error {
	if len(r.rrules) == 0 && len(r.rdate) == 0 {
		if len(r.exdate) > 0 && ev.RecurrenceID == "" {
			p.warn(ev.UID, "EXDATE without RRULE or RDATE ignored")
		}
		if len(r.exrules) > 0 && ev.RecurrenceID == "" {
			p.warn(ev.UID, "EXRULE without RRULE or RDATE ignored")
		}
		return nil
	}
	if len(r.rrules) > 1 {
		// Several RRULEs are legal in RFC 2445 but not in Google: the
		// smallest is the series' rule, whatever the order, and the
		// others are expanded into RDATEs below.
		slices.SortFunc(r.rrules, func(a, b *ical.IANAProperty) int { return strings.Compare(a.Value, b.Value) })
	}
	var rule string
	var extra []string
	for _, pr := range r.rrules {
		v, err := p.rruleValue(ev, pr.Value)
		switch {
		case err != nil:
			// The rule cannot be expanded: the series keeps the rest.
			p.warn(ev.UID, fmt.Sprintf("event%s: %v; only its first occurrence is kept", quoteSummary(ev.Summary), err))
		case rule == "":
			rule = v
		default:
			extra = append(extra, v)
		}
	}
	rdates := p.dateList(ev, r, "RDATE", r.rdate)
	if len(extra) > 0 {
		rdates = p.extraRules(ev, rule, extra, rdates)
	}
	if rule == "" && len(rdates) == 0 {
		return nil
	}
	exdates := p.dateList(ev, r, "EXDATE", r.exdate)
	series, err := seriesOf(ev.Start, rule, rdates, exdates)
	if err != nil {
		p.warn(ev.UID, fmt.Sprintf("event%s: %v; only its first occurrence is kept", quoteSummary(ev.Summary), err))
		return nil
	}
	if len(r.exrules) > 0 {
		p.exRules(ev, r.exrules, series)
	}
	ev.SetSeries(series)
	return nil
}

// maxExtraRDates bounds the RDATEs one extra RRULE is expanded into.
const maxExtraRDates = 1000

// extraRules expands the RRULEs beyond the first into RDATEs (the
// instances of a series are the union of its rules, RFC 5545 §3.8.5.3),
// from the start of the window's first year to the end of its last (two
// years ahead when the window is open), so that the lines change once a
// year, not with every fetch. Occurrences the first rule has already are
// left out. rdates are the series' own RDATEs, to which they are added.
func (p *parser) extraRules(ev *Event, rule string, extra []string, rdates []time.Time) []time.Time {
	lo, hi := p.ruleHorizon()
	have := map[int64]bool{}
	if rule != "" {
		if main, err := seriesOf(ev.Start, rule, nil, nil); err == nil {
			next := main.Occurrences(maxExpansion)
			for t, ok := next(); ok && t.Before(hi); t, ok = next() {
				have[t.UnixNano()] = true
			}
		}
	}
	have[ev.Start.T.UnixNano()] = true
	for _, t := range rdates {
		have[t.UnixNano()] = true
	}
	for _, v := range extra {
		s, err := seriesOf(ev.Start, v, nil, nil)
		if err != nil {
			p.warn(ev.UID, fmt.Sprintf("event%s: RRULE %q ignored: %v", quoteSummary(ev.Summary), v, err))
			continue
		}
		n, cut, last := 0, false, ev.Start.T
		next := s.Occurrences(maxExpansion)
		for t, ok := next(); ok; t, ok = next() {
			if !t.Before(hi) {
				cut, last = true, hi.Add(-time.Second)
				break
			}
			if t.Before(lo) || have[t.UnixNano()] {
				continue
			}
			if n == maxExtraRDates {
				cut = true
				break
			}
			have[t.UnixNano()] = true
			rdates = append(rdates, t)
			n, last = n+1, t
		}
		msg := fmt.Sprintf("event%s has several RRULEs; Google takes one: %q is written as %d RDATEs", quoteSummary(ev.Summary), v, n)
		if cut {
			p.noteReread(extraRulesHorizon(hi, lo, p.opts.WindowPast, p.ruleFuture()))
			msg += fmt.Sprintf(" (its occurrences after %s are not mirrored)", last.Format("2006-01-02"))
		}
		p.warn(ev.UID, msg)
	}
	slices.SortFunc(rdates, func(a, b time.Time) int { return a.Compare(b) })
	return rdates
}

// ruleHorizon is the span [lo, hi) that the lines standing for what Google
// cannot hold as a rule (the RDATEs of extra RRULEs, the EXDATEs of
// EXRULEs) are written for: from the start of the window's first year
// (lo is zero when the window is open towards the past) to the end of its
// last, two years ahead when the window is open, so that the lines change
// once a year, not with every fetch.
func (p *parser) ruleHorizon() (lo, hi time.Time) {
	now := p.opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	hi = time.Date(now.Add(p.ruleFuture()).Year()+1, 1, 1, 0, 0, 0, 0, time.UTC)
	if p.opts.WindowPast > 0 {
		lo = time.Date(now.Add(-p.opts.WindowPast).Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return lo, hi
}

// ruleFuture is how far ahead ruleHorizon reaches: the window's future,
// two years when the window is open.
func (p *parser) ruleFuture() time.Duration {
	if f := p.opts.WindowFuture; f > 0 {
		return f
	}
	return 2 * 365 * 24 * time.Hour
}

// maxExRuleDates bounds the EXDATEs the EXRULEs of one series are written
// as.
const maxExRuleDates = 1000

// exRules applies RFC 2445's exclusion rules to s. Whether Google applies
// an EXRULE line is unknown (it may ignore or refuse it), so none is sent:
// every occurrence of s within ruleHorizon that an EXRULE produces is
// written as an EXDATE instead. An EXRULE is read as an RRULE value (the
// same parse), anchored at DTSTART, which it excludes only when it
// produces it itself (its COUNT counts its own occurrences).
func (p *parser) exRules(ev *Event, props []*ical.IANAProperty, s *Series) {
	lo, hi := p.ruleHorizon()
	// The EXDATEs stop at hi, the series may not: render again before the
	// window reaches it, so the exclusions roll forward with time.
	p.noteReread(extraRulesHorizon(hi, lo, p.opts.WindowPast, p.ruleFuture()))
	excluded, values := p.exRuleTimes(ev, props, hi)
	if len(excluded) == 0 {
		return
	}
	var add []time.Time
	cut, beyond := false, false
	next := s.Occurrences(maxExpansion)
	for t, ok := next(); ok; t, ok = next() {
		if !t.Before(hi) {
			beyond = true
			break
		}
		if t.Before(lo) || !excluded[t.UnixNano()] {
			continue
		}
		if len(add) == maxExRuleDates {
			cut = true
			break
		}
		add = append(add, t)
	}
	if len(add) > 0 {
		s.exdates = append(slices.Clone(s.exdates), add...)
		slices.SortFunc(s.exdates, func(a, b time.Time) int { return a.Compare(b) })
		s.exdates = slices.CompactFunc(s.exdates, func(a, b time.Time) bool { return a.Equal(b) })
	}
	msg := fmt.Sprintf("event%s has an EXRULE (%s); Google is not known to apply one: it is written as %d EXDATEs",
		quoteSummary(ev.Summary), strings.Join(values, ", "), len(add))
	switch {
	case cut:
		msg += fmt.Sprintf(" (the occurrences it excludes after %s are shown)", add[len(add)-1].Format("2006-01-02"))
	case beyond:
		msg += fmt.Sprintf(" up to %s", hi.Add(-time.Second).Format("2006-01-02"))
	}
	p.warn(ev.UID, msg)
}

// exRuleTimes is the times before hi the EXRULEs props exclude (by
// UnixNano), at most maxExpansion a rule, and the rules read; a rule that
// cannot be read is ignored with a warning.
func (p *parser) exRuleTimes(ev *Event, props []*ical.IANAProperty, hi time.Time) (excluded map[int64]bool, values []string) {
	excluded = map[int64]bool{}
	for _, pr := range props {
		v, err := p.rruleValue(ev, pr.Value)
		var x *Series
		if err == nil {
			x, err = seriesOf(ev.Start, v, nil, nil)
		}
		if err != nil {
			p.warn(ev.UID, fmt.Sprintf("event%s: EXRULE ignored: %v", quoteSummary(ev.Summary), err))
			continue
		}
		values = append(values, v)
		next := x.ruleTimes()
		for n := 0; n < maxExpansion; n++ {
			t, ok := next()
			if !ok || !t.Before(hi) {
				break
			}
			excluded[t.UnixNano()] = true
		}
	}
	return excluded, values
}

// rruleValue validates an RRULE value and puts its UNTIL in the form Google
// wants (UTC for a timed series, a DATE for an all-day one), dropping a
// COUNT that comes with an UNTIL.
func (p *parser) rruleValue(ev *Event, v string) (string, error) {
	norm := normaliseRRule(v)
	opt, err := parseNormalisedRRule(norm)
	if err != nil {
		return "", err
	}
	// The rule is read as Series.wallRule expands it: on DTSTART's wall
	// clock.
	opt.Dtstart = wallOf(ev.Start.T)
	if why := p.neverMatches(*opt, norm); why != "" {
		return "", fmt.Errorf("RRULE %q can never produce an occurrence (%s)", norm, why)
	}
	parts := strings.Split(norm, ";")
	out := parts[:0]
	hasUntil := false
	for _, part := range parts {
		k, val, _ := strings.Cut(part, "=")
		if k != "UNTIL" {
			out = append(out, part)
			continue
		}
		hasUntil = true
		until, err := p.until(ev, val)
		if err != nil {
			return "", err
		}
		if ev.Start.AllDay {
			out = append(out, "UNTIL="+until.Format("20060102"))
		} else {
			out = append(out, "UNTIL="+until.UTC().Format("20060102T150405Z"))
		}
	}
	if hasUntil && opt.Count > 0 {
		// RFC 5545 forbids both; UNTIL is the safer bound.
		out = slices.DeleteFunc(out, func(s string) bool { return strings.HasPrefix(s, "COUNT=") })
	}
	return strings.Join(out, ";"), nil
}

// until reads an UNTIL value. For an all-day series it is a date (a UTC
// date-time becomes the date it already is anywhere on Earth, UTC+14, so a
// producer's local midnight never loses the last day); for a timed series
// an instant (a DATE means the end of that day, a floating time is in the
// series' zone).
func (p *parser) until(ev *Event, val string) (time.Time, error) {
	utc := strings.HasSuffix(val, "Z")
	wall, isDate, err := parseICalTime(strings.TrimSuffix(val, "Z"))
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid UNTIL %q", val)
	}
	if ev.Start.AllDay {
		if utc {
			wall = wall.Add(14 * time.Hour)
		}
		return time.Date(wall.Year(), wall.Month(), wall.Day(), 0, 0, 0, 0, time.UTC), nil
	}
	loc := ev.Start.T.Location()
	switch {
	case utc:
		return wall, nil
	case isDate:
		return tz.At(time.Date(wall.Year(), wall.Month(), wall.Day(), 23, 59, 59, 0, time.UTC), loc), nil
	}
	return tz.At(time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, time.UTC), loc), nil
}

// dateList merges RDATE or EXDATE properties into one Google line and the
// instants (all-day: UTC midnights) for the window. A floating value is
// read in DTSTART's zone, as RFC 5545 means (the value types match
// DTSTART's), not in the feed's default zone.
func (p *parser) dateList(ev *Event, r *rawEvent, name string, props []*ical.IANAProperty) []time.Time {
	if len(props) == 0 {
		return nil
	}
	startTZID, startUTC := "", false
	if st := r.single[pDTStart]; st != nil {
		startTZID = param(st, "TZID")
		v := strings.TrimSpace(st.Value)
		startUTC = startTZID == "" && (strings.HasSuffix(v, "Z") || strings.HasSuffix(v, "z"))
	}
	var ts []time.Time
	for _, pr := range props {
		tzid := param(pr, "TZID")
		if tzid == "" {
			tzid = startTZID
		}
		isDate := strings.EqualFold(param(pr, "VALUE"), "DATE")
		for v := range strings.SplitSeq(pr.Value, ",") {
			v = strings.TrimSpace(v)
			var periodEnd string
			if i := strings.IndexByte(v, '/'); i >= 0 {
				v, periodEnd = v[:i], strings.TrimSpace(v[i+1:])
			}
			if v == "" {
				continue
			}
			if startUTC && tzid == "" && !strings.HasSuffix(v, "Z") && !strings.HasSuffix(v, "z") && len(v) > 8 {
				v += "Z" // floating beside a UTC DTSTART: UTC
			}
			t, wall, err := p.timeValue(v, tzid, isDate, ev.UID)
			if err != nil {
				p.warn(ev.UID, fmt.Sprintf("%s value %q ignored: %v", name, v, err))
				continue
			}
			at := p.alignToStart(ev, t, wall)
			ts = append(ts, at)
			if periodEnd != "" && name == "RDATE" && !ev.Start.AllDay && !t.AllDay {
				p.period(ev, r, at, periodEnd, tzid)
			}
		}
	}
	if len(ts) == 0 {
		return nil
	}
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	return slices.CompactFunc(ts, func(a, b time.Time) bool { return a.Equal(b) })
}

// period notes an RDATE PERIOD's own end (a date-time or a duration),
// when it gives the occurrence another length than the series': Google's
// RDATE holds only the start, so settleKeys writes that occurrence as an
// override of the series with its own end.
func (p *parser) period(ev *Event, r *rawEvent, start time.Time, end, tzid string) {
	var until time.Time
	if c := end[0]; c == 'P' || c == 'p' || c == '+' || c == '-' {
		d, err := ParseDuration(end)
		if err != nil {
			p.warn(ev.UID, fmt.Sprintf("RDATE period end %q ignored: %v", end, err))
			return
		}
		until = addDuration(start.In(ev.Start.T.Location()), d)
	} else {
		t, _, err := p.timeValue(end, tzid, false, ev.UID)
		if err != nil || t.AllDay {
			p.warn(ev.UID, fmt.Sprintf("RDATE period end %q ignored", end))
			return
		}
		until = t.T
	}
	if until.Before(start) {
		p.warn(ev.UID, fmt.Sprintf("RDATE period end %q before its start ignored", end))
		return
	}
	if until.Sub(start) == ev.End.T.Sub(ev.Start.T) {
		return
	}
	r.periods = append(r.periods, period{start: start, end: until})
}

// dateLine renders sorted RDATE or EXDATE instants as one line in the form
// Google takes: dates for an all-day series, wall-clock times with the
// series' IANA zone, or UTC.
func dateLine(name string, start Time, ts []time.Time) string {
	var head string
	var loc *time.Location
	layout := stampUTC
	switch {
	case start.AllDay:
		head, layout = name+";VALUE=DATE:", stampDate
	case start.Zone != "":
		head, layout, loc = name+";TZID="+start.Zone+":", stampLocal, start.T.Location()
	default:
		head = name + ":"
	}
	b := make([]byte, 0, len(head)+17*len(ts))
	b = append(b, head...)
	for i, t := range ts {
		if i > 0 {
			b = append(b, ',')
		}
		switch layout {
		case stampLocal:
			t = t.In(loc)
		case stampUTC:
			t = t.UTC()
		}
		b = appendStamp(b, t, layout)
	}
	return string(b)
}

// The layouts of appendStamp.
const (
	stampDate  = "20060102"
	stampLocal = "20060102T150405"
	stampUTC   = "20060102T150405Z"
)

// appendStamp appends t.Format(layout) for one of the stamp layouts,
// without Format's reading of the layout for the years 0 to 9999.
func appendStamp(b []byte, t time.Time, layout string) []byte {
	if t.Location() != time.UTC {
		// The wall clock as UTC fields: the zone is looked up once, not
		// for the date and again for the clock.
		_, off := t.Zone()
		t = t.UTC().Add(time.Duration(off) * time.Second)
	}
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, layout)
	}
	b = append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10),
		byte('0'+mo/10), byte('0'+mo%10), byte('0'+d/10), byte('0'+d%10))
	if layout == stampDate {
		return b
	}
	h, mi, s := t.Clock()
	b = append(b, 'T', byte('0'+h/10), byte('0'+h%10), byte('0'+mi/10), byte('0'+mi%10), byte('0'+s/10), byte('0'+s%10))
	if layout == stampUTC {
		b = append(b, 'Z')
	}
	return b
}

// alignToStart gives a date in a timed series the series' time of day, and
// a date-time in an all-day series its date.
func (p *parser) alignToStart(ev *Event, t Time, wall time.Time) time.Time {
	switch {
	case ev.Start.AllDay && !t.AllDay:
		return time.Date(wall.Year(), wall.Month(), wall.Day(), 0, 0, 0, 0, time.UTC)
	case !ev.Start.AllDay && t.AllDay:
		st := ev.Start.T
		return tz.At(time.Date(t.T.Year(), t.T.Month(), t.T.Day(), st.Hour(), st.Minute(), st.Second(), 0, time.UTC), st.Location())
	}
	return t.T
}

// alignRecurrenceIDs gives each override's RECURRENCE-ID the type of its
// master's DTSTART (Exchange writes date-time ids for all-day series), so
// the key matches the instance Google expands, and its Original the form
// the master's Series identifies occurrences by.
func alignRecurrenceIDs(events []Event, ss []*series) {
	masters := map[string]int{}
	for i := range events {
		if events[i].RecurrenceID == "" && events[i].IsRecurring() {
			if _, ok := masters[events[i].UID]; !ok {
				masters[events[i].UID] = i
			}
		}
	}
	for i := range events {
		ev := &events[i]
		m, ok := masters[ev.UID]
		if ev.RecurrenceID == "" || !ok {
			continue
		}
		master := &events[m]
		isDate := len(ev.RecurrenceID) == 8
		wall := ss[i].ridWall
		st := master.Start
		switch {
		case st.AllDay && !isDate:
			ev.RecurrenceID = wall.Format("20060102")
			ev.Original = Time{AllDay: true, T: time.Date(wall.Year(), wall.Month(), wall.Day(), 0, 0, 0, 0, time.UTC)}
		case st.AllDay:
			ev.Original = Time{AllDay: true, T: ev.Original.T}
		case isDate:
			t := tz.At(time.Date(wall.Year(), wall.Month(), wall.Day(), st.T.Hour(), st.T.Minute(), st.T.Second(), 0, time.UTC), st.T.Location())
			ev.RecurrenceID = t.UTC().Format("20060102T150405Z")
			ev.Original = Time{T: t, Zone: st.Zone}
		default:
			ev.Original = Time{T: ev.Original.T.In(st.T.Location()), Zone: st.Zone}
		}
	}
}
