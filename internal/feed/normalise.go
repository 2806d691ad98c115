package feed

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	ical "github.com/arran4/golang-ical"
	"github.com/calsyncd/calsyncd/internal/tz"
)

// Properties of a VEVENT that may appear once.
type propKey int

const (
	pUID propKey = iota
	pSummary
	pDescription
	pLocation
	pURL
	pStatus
	pTransp
	pClass
	pSequence
	pDTStart
	pDTEnd
	pDuration
	pRecurrenceID
	pLastModified
	pDTStamp
	nSingular
)

var singularNames = map[string]propKey{
	"UID": pUID, "SUMMARY": pSummary, "DESCRIPTION": pDescription, "LOCATION": pLocation, "URL": pURL,
	"STATUS": pStatus, "TRANSP": pTransp, "CLASS": pClass, "SEQUENCE": pSequence, "DTSTART": pDTStart,
	"DTEND": pDTEnd, "DURATION": pDuration, "RECURRENCE-ID": pRecurrenceID, "LAST-MODIFIED": pLastModified,
	"DTSTAMP": pDTStamp,
}

// defining properties decide when and which an event is: two different
// values make the event ambiguous, so it is skipped rather than guessed
// (a guess would depend on property order and flip the hash).
func (k propKey) defining() bool {
	return k == pUID || k == pDTStart || k == pDTEnd || k == pDuration || k == pRecurrenceID
}

// rawEvent is a VEVENT's properties, sorted out.
type rawEvent struct {
	index  int
	uid    string
	single [nSingular]*ical.IANAProperty
	rrules []*ical.IANAProperty
	exdate []*ical.IANAProperty
	rdate  []*ical.IANAProperty
	// exrules are RFC 2445's exclusion rules (recurrence.go applies them).
	exrules []*ical.IANAProperty
	err     error
	// periods are the RDATE PERIODs whose length is not the series'.
	periods []period
	// categories are the CATEGORIES lines; subs the VEVENT's components
	// (its VALARMs).
	categories []*ical.IANAProperty
	subs       []ical.Component
	// charset makes its text values UTF-8.
	charset *textCharset
}

func (r *rawEvent) text(k propKey) string {
	if p := r.single[k]; p != nil {
		return r.charset.text(textValue(&p.BaseProperty))
	}
	return ""
}

// extract sorts a VEVENT's properties into r (reused: its lists keep
// their room) and notes the years its TZIDs are used in.
func (p *parser) extract(r *rawEvent, props []ical.IANAProperty, index int) {
	*r = rawEvent{index: index, rrules: r.rrules[:0], exdate: r.exdate[:0], rdate: r.rdate[:0], exrules: r.exrules[:0], categories: r.categories[:0], periods: r.periods[:0], charset: p.charset}
	for i := range props {
		pr := &props[i]
		name := pr.IANAToken
		if k, ok := singularKey(name); ok {
			if prev := r.single[k]; prev != nil {
				if prev.Value == pr.Value && sameParams(prev, pr) {
					continue
				}
				if k.defining() {
					r.err = fmt.Errorf("%s appears twice with different values", name)
					continue
				}
				// Keep the smaller value, whatever the order.
				if pr.Value > prev.Value {
					continue
				}
			}
			r.single[k] = pr
			if k == pUID {
				r.uid = strings.TrimSpace(p.charset.text(textValue(&pr.BaseProperty)))
			}
			if k == pDTStart || k == pDTEnd || k == pRecurrenceID {
				p.noteYear(pr)
			}
			continue
		}
		if (name == "RRULE" || name == "EXRULE") && strings.IndexByte(pr.Value, '\\') >= 0 {
			cp := *pr
			cp.Value = ruleText(pr.Value)
			pr = &cp
		}
		switch name {
		case "RRULE":
			r.rrules = append(r.rrules, pr)
		case "EXDATE":
			r.exdate = append(r.exdate, pr)
			p.noteYear(pr)
		case "RDATE":
			r.rdate = append(r.rdate, pr)
			p.noteYear(pr)
		case "EXRULE":
			r.exrules = append(r.exrules, pr)
		case "CATEGORIES":
			r.categories = append(r.categories, pr)
		}
	}
	p.alignKinds(r)
}

// ruleText reads a recurrence rule that its producer escaped as TEXT
// (RRULE:FREQ=DAILY\;COUNT=10): a RECUR value has no escapes, so a
// backslash before ';' or ',' (or itself) only hides the separator.
func ruleText(v string) string {
	if strings.IndexByte(v, '\\') < 0 {
		return v
	}
	return ruleUnescaper.Replace(v)
}

var ruleUnescaper = strings.NewReplacer(`\;`, ";", `\,`, ",", `\\`, `\`)

func sameParams(a, b *ical.IANAProperty) bool {
	return param(a, "TZID") == param(b, "TZID") && param(a, "VALUE") == param(b, "VALUE")
}

func (p *parser) noteYear(pr *ical.IANAProperty) {
	tzid := param(pr, "TZID")
	if tzid == "" || len(pr.Value) < 4 {
		return
	}
	if y, err := strconv.Atoi(pr.Value[:4]); err == nil && y > 1 && y < 9999 {
		p.zones.UseYear(tzid, y)
	}
}

// param returns a property parameter's first value, its RFC 6868 escapes
// (^n ^' ^^) read.
func param(pr *ical.IANAProperty, name string) string {
	if v := pr.ICalParameters[name]; len(v) > 0 {
		return strings.TrimSpace(caretDecode(v[0]))
	}
	return ""
}

// caretDecode reads RFC 6868's escapes in a parameter value: ^n is a
// newline, ^' a double quote, ^^ a caret; any other caret is itself.
func caretDecode(v string) string {
	if strings.IndexByte(v, '^') < 0 {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '^' && i+1 < len(v) {
			switch v[i+1] {
			case 'n', 'N':
				b.WriteByte('\n')
				i++
				continue
			case '\'':
				b.WriteByte('"')
				i++
				continue
			case '^':
				b.WriteByte('^')
				i++
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// textValue is the value of a property whose value is TEXT by
// definition (SUMMARY, DESCRIPTION, UID...), unescaped whatever its
// parameters say: a VALUE parameter that names no TEXT type
// (Proton Mail writes SUMMARY;VALUE="A^nB^n":A\nB\n) left it as it was
// written, and its escapes would show in Google.
func textValue(pr *ical.BaseProperty) string {
	if pr.ICalParameters == nil || pr.GetValueType() == ical.ValueDataTypeText {
		return pr.Value
	}
	return ical.FromText(pr.Value)
}

// series is what duplicate resolution and recurrence-id alignment need
// beyond the Event (the recurrence itself is Event.Series).
type series struct {
	lastModified time.Time
	stamp        time.Time
	// ridWall is the RECURRENCE-ID's wall clock, for aligning its type
	// with the master's.
	ridWall time.Time
	// rare is what few events have (nil for the others: every event
	// has a series, so its size counts).
	rare *rareSeries
}

// rareSeries is what only unusual events need of their series.
type rareSeries struct {
	// own is the series of an instance that carries recurrence lines
	// (RRULE or RDATE beside its RECURRENCE-ID), nil otherwise.
	own *Series
	// periods are the occurrences an RDATE PERIOD gives their own end.
	periods []period
}

func (s *series) own() *Series {
	if s.rare == nil {
		return nil
	}
	return s.rare.own
}

func (s *series) periods() []period {
	if s.rare == nil {
		return nil
	}
	return s.rare.periods
}

// period is an RDATE PERIOD's occurrence: its start and its own end.
type period struct{ start, end time.Time }

// normalise reads a VEVENT's sorted properties as an Event: what it
// says, when it is, and its recurrence.
func (p *parser) normalise(r *rawEvent) (Event, *series, error) {
	var ev Event
	class := describe(&ev, r)
	s := &series{lastModified: stampOf(r.single[pLastModified]), stamp: stampOf(r.single[pDTStamp])}
	if err := p.setTimes(&ev, s, r); err != nil {
		return ev, nil, err
	}
	if err := p.setSeries(&ev, s, r); err != nil {
		return ev, nil, err
	}
	if class != "" || len(r.categories) > 0 || len(r.subs) > 0 {
		ev.Details = details(&ev, r, class)
	}
	return ev, s, nil
}

// describe sets what the event says of itself: its UID, text, status,
// transparency and visibility. class is a CLASS calsyncd does not know,
// "" for the others.
func describe(ev *Event, r *rawEvent) (class string) {
	*ev = Event{
		UID:          r.uid,
		Summary:      r.text(pSummary),
		Description:  r.text(pDescription),
		Location:     r.text(pLocation),
		Status:       statusOf(r.text(pStatus)),
		Transparency: TransparencyOpaque,
	}
	if u := r.single[pURL]; u != nil {
		ev.URL = strings.TrimSpace(ical.FromText(r.charset.text(u.Value)))
	}
	if q := r.single[pSequence]; q != nil {
		ev.Sequence, _ = strconv.Atoi(strings.TrimSpace(q.Value))
	}
	if strings.EqualFold(strings.TrimSpace(r.text(pTransp)), "TRANSPARENT") {
		ev.Transparency = TransparencyTransparent
	}
	ev.Visibility, class = visibilityOf(r.text(pClass))
	return class
}

func statusOf(v string) string {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "CANCELLED", "CANCELED":
		return StatusCancelled
	case "TENTATIVE":
		return StatusTentative
	}
	return StatusConfirmed
}

// visibilityOf reads a CLASS; class is the value when calsyncd does not
// know it.
func visibilityOf(v string) (visibility, class string) {
	switch c := strings.ToUpper(strings.TrimSpace(v)); c {
	case "PUBLIC":
		return VisibilityPublic, ""
	case "PRIVATE":
		return VisibilityPrivate, ""
	case "CONFIDENTIAL":
		return VisibilityConfidential, ""
	case "":
		return VisibilityDefault, ""
	default:
		// An x-name or an iana-token we do not know: RFC 5545 §3.8.1.3
		// has it treated as PRIVATE. Details keeps the value for filters.
		return VisibilityPrivate, c
	}
}

// setTimes reads DTSTART, the end and the RECURRENCE-ID.
func (p *parser) setTimes(ev *Event, s *series, r *rawEvent) error {
	start := r.single[pDTStart]
	if start == nil {
		return errors.New("no DTSTART")
	}
	var err error
	if ev.Start, _, err = p.parseTime(start, ev.UID); err != nil {
		return fmt.Errorf("DTSTART: %w", err)
	}
	if err := p.setEnd(ev, r); err != nil {
		return err
	}
	if rid := r.single[pRecurrenceID]; rid != nil {
		t, wall, err := p.parseTime(rid, ev.UID)
		if err != nil {
			return fmt.Errorf("RECURRENCE-ID: %w", err)
		}
		ev.RecurrenceID, ev.Original = CanonicalRecurrenceID(t), t
		s.ridWall = wall
		ev.ThisAndFuture = strings.EqualFold(param(rid, "RANGE"), "THISANDFUTURE")
	}
	return nil
}

// setSeries reads the recurrence and the RDATE PERIODs' own ends.
func (p *parser) setSeries(ev *Event, s *series, r *rawEvent) error {
	if ev.RecurrenceID != "" && (len(r.rrules) > 0 || len(r.rdate) > 0) {
		// An instance with recurrence lines of its own (some exporters
		// write the master so): its series is read and kept aside;
		// settleKeys makes the component the master when its UID has
		// none, and ignores the lines otherwise.
		rid, orig, taf := ev.RecurrenceID, ev.Original, ev.ThisAndFuture
		ev.RecurrenceID, ev.Original, ev.ThisAndFuture = "", Time{}, false
		if err := p.recurrence(ev, r); err != nil {
			return err
		}
		if ev.Series != nil {
			s.rare = &rareSeries{own: ev.Series}
		}
		ev.SetSeries(nil)
		ev.RecurrenceID, ev.Original, ev.ThisAndFuture = rid, orig, taf
	} else if err := p.recurrence(ev, r); err != nil {
		return err
	}
	if len(r.periods) > 0 && (ev.Series != nil || s.own() != nil) {
		if s.rare == nil {
			s.rare = &rareSeries{}
		}
		s.rare.periods = slices.Clone(r.periods)
	}
	return nil
}

// stampOf reads a LAST-MODIFIED or DTSTAMP (zero when absent or bad).
func stampOf(pr *ical.IANAProperty) time.Time {
	if pr == nil {
		return time.Time{}
	}
	t, _, _ := parseICalTime(strings.TrimSuffix(strings.TrimSpace(pr.Value), "Z"))
	return t
}

// setEnd derives the end from DTEND, DURATION or, lacking both, RFC 5545's
// defaults: one day for an all-day event, zero length for a timed one.
func (p *parser) setEnd(ev *Event, r *rawEvent) error {
	switch {
	case r.single[pDTEnd] != nil:
		end, wall, err := p.parseTime(r.single[pDTEnd], ev.UID)
		if err != nil {
			return fmt.Errorf("DTEND: %w", err)
		}
		switch {
		case ev.Start.AllDay && !end.AllDay:
			// A timed end on an all-day start: the day it falls in counts.
			d := time.Date(wall.Year(), wall.Month(), wall.Day(), 0, 0, 0, 0, time.UTC)
			if wall.Hour() != 0 || wall.Minute() != 0 || wall.Second() != 0 {
				d = d.AddDate(0, 0, 1)
			}
			end = Time{AllDay: true, T: d}
		case !ev.Start.AllDay && end.AllDay:
			loc := ev.Start.T.Location()
			end = Time{T: tz.At(time.Date(end.T.Year(), end.T.Month(), end.T.Day(), 0, 0, 0, 0, time.UTC), loc), Zone: ev.Start.Zone}
		}
		ev.End = end
	case r.single[pDuration] != nil:
		d, err := ParseDuration(r.single[pDuration].Value)
		if err != nil {
			return fmt.Errorf("DURATION: %w", err)
		}
		ev.End = ev.Start
		if ev.Start.AllDay {
			days := d.Days + int((d.Exact+24*time.Hour-1)/(24*time.Hour))
			ev.End.T = ev.Start.T.AddDate(0, 0, days)
		} else {
			ev.End.T = addDuration(ev.Start.T, d)
		}
	case ev.Start.AllDay:
		ev.End = Time{AllDay: true, T: ev.Start.T.AddDate(0, 0, 1)}
	default:
		ev.End = ev.Start
	}
	if ev.Start.AllDay && !ev.End.T.After(ev.Start.T) {
		// Google refuses an all-day event that ends where it starts.
		ev.End = Time{AllDay: true, T: ev.Start.T.AddDate(0, 0, 1)}
	}
	if ev.End.T.Before(ev.Start.T) {
		p.warn(ev.UID, fmt.Sprintf("event%s ends before it starts; made zero-length", quoteSummary(ev.Summary)))
		ev.End = ev.Start
	}
	return nil
}

// parseTime reads a DATE or DATE-TIME property: the boundary and its wall
// clock (as UTC fields).
func (p *parser) parseTime(pr *ical.IANAProperty, uid string) (Time, time.Time, error) {
	v := strings.TrimSpace(pr.Value)
	if strings.HasPrefix(strings.ToUpper(param(pr, "VALUE")), "PERIOD") || strings.ContainsAny(v, ",/") {
		return Time{}, time.Time{}, fmt.Errorf("invalid value %q", v)
	}
	return p.timeValue(v, param(pr, "TZID"), strings.EqualFold(param(pr, "VALUE"), "DATE"), uid)
}

// timeValue interprets one DATE or DATE-TIME value with its TZID.
func (p *parser) timeValue(v, tzid string, date bool, uid string) (Time, time.Time, error) {
	utc := strings.HasSuffix(v, "Z") || strings.HasSuffix(v, "z")
	if utc {
		v = v[:len(v)-1]
	}
	wall, isDate, err := parseICalTime(v)
	if err != nil {
		return Time{}, time.Time{}, err
	}
	if date && !isDate {
		// VALUE=DATE on a date-time: the date is what was meant.
		wall = time.Date(wall.Year(), wall.Month(), wall.Day(), 0, 0, 0, 0, time.UTC)
		isDate = true
	}
	if isDate {
		return Time{AllDay: true, T: wall}, wall, nil
	}
	if utc && (tzid == "" || p.zones.Resolve(tzid).How == tz.Unresolved) {
		return Time{T: wall}, wall, nil
	}
	// A TZID and a trailing Z both (Google's own export writes
	// DTSTART;TZID=America/New_York:20211222T170000Z): Google shows the
	// TZID's wall clock, 17:00 in New York, and so does the mirror.
	z := p.floating
	if tzid != "" {
		z = p.zones.Resolve(tzid)
		if utc {
			p.warnOnce("tz+z:"+tzid, fmt.Sprintf("times with TZID %q and a trailing Z are read on %s's clock, as Google reads them", tzid, tzid))
		}
		switch z.How {
		case tz.Unresolved:
			p.warnOnce("tz:"+tzid, fmt.Sprintf("unknown time zone %q: its times are read as %s", tzid, p.floating.Name))
			z = p.floating
		case tz.ByCustom:
			p.warnOnce("tz:"+tzid, fmt.Sprintf("time zone %q matches no IANA zone: its times keep the feed's own rules (its series are written as single events)", tzid))
		}
	}
	t, _ := z.WallTime(wall)
	name := z.Name
	if name == tz.UTC {
		name = ""
	}
	return Time{T: t, Zone: name}, wall, nil
}

// minYear is the earliest year accepted: the Gregorian calendar's first
// full year (and well clear of time.Time's zero value, which means unset).
const minYear = 1583

// parseICalTime reads "20060102" or "20060102T150405" (no Z) as wall-clock
// fields in UTC. isDate reports the first form.
func parseICalTime(v string) (t time.Time, isDate bool, err error) {
	bad := func() (time.Time, bool, error) { return time.Time{}, false, fmt.Errorf("invalid date-time %q", v) }
	if len(v) != 8 && len(v) != 15 {
		return bad()
	}
	num := func(s string) int {
		n := 0
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, mo, d := num(v[0:4]), num(v[4:6]), num(v[6:8])
	if y < minYear || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, time.Month(mo)) {
		return bad()
	}
	if len(v) == 8 {
		return time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC), true, nil
	}
	if v[8] != 'T' && v[8] != 't' {
		return bad()
	}
	h, mi, s := num(v[9:11]), num(v[11:13]), num(v[13:15])
	if h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60 {
		return bad()
	}
	if s == 60 {
		s = 59 // a leap second
	}
	return time.Date(y, time.Month(mo), d, h, mi, s, 0, time.UTC), false, nil
}

// daysIn is the number of days of month m (January to December) of the
// proleptic Gregorian year y.
func daysIn(y int, m time.Month) int {
	switch m {
	case time.February:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

// CanonicalRecurrenceID renders a RECURRENCE-ID as mapping keys store it.
func CanonicalRecurrenceID(t Time) string {
	if t.AllDay {
		return t.T.Format("20060102")
	}
	return t.T.UTC().Format("20060102T150405Z")
}

// ParseRecurrenceID reads a canonical recurrence id (CanonicalRecurrenceID)
// as the original start it names in a series starting at start, the way
// the series identifies its occurrences. It is for keys read back from the
// store; events carry theirs as Event.Original.
func ParseRecurrenceID(rid string, start Time) (time.Time, bool) {
	if len(rid) == 8 {
		t, err := time.Parse("20060102", rid)
		if err != nil {
			return time.Time{}, false
		}
		if !start.AllDay {
			st := start.T
			t = tz.At(time.Date(t.Year(), t.Month(), t.Day(), st.Hour(), st.Minute(), st.Second(), 0, time.UTC), st.Location())
		}
		return t, true
	}
	t, err := time.Parse("20060102T150405Z", rid)
	if err != nil {
		return time.Time{}, false
	}
	if start.AllDay {
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), true
	}
	return t.In(start.T.Location()), true
}

// Duration is an RFC 5545 duration: days and weeks are nominal (they follow
// the calendar across DST changes), hours and below are exact.
type Duration struct {
	Days  int
	Exact time.Duration
}

// ParseDuration parses an RFC 5545 DURATION value such as "PT1H30M",
// "P1D", "-PT15M" or "P1W". A week written after the T ("PT1W", as
// Synology does) is read as a week.
func ParseDuration(v string) (Duration, error) {
	s := strings.ToUpper(strings.TrimSpace(v))
	neg := false
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	if !strings.HasPrefix(s, "P") || len(s) < 3 {
		return Duration{}, fmt.Errorf("invalid duration %q", v)
	}
	s = s[1:]
	var d Duration
	inTime := false
	num := 0
	digits := 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			num = num*10 + int(c-'0')
			digits++
			if num > 1e7 {
				return Duration{}, fmt.Errorf("duration %q is too long", v)
			}
			continue
		case c == 'T':
			if inTime || digits > 0 {
				return Duration{}, fmt.Errorf("invalid duration %q", v)
			}
			inTime = true
			continue
		}
		if digits == 0 {
			return Duration{}, fmt.Errorf("invalid duration %q", v)
		}
		switch {
		case c == 'W':
			d.Days += 7 * num
		case c == 'D' && !inTime:
			d.Days += num
		case c == 'H' && inTime:
			d.Exact += time.Duration(num) * time.Hour
		case c == 'M' && inTime:
			d.Exact += time.Duration(num) * time.Minute
		case c == 'S' && inTime:
			d.Exact += time.Duration(num) * time.Second
		default:
			return Duration{}, fmt.Errorf("invalid duration %q", v)
		}
		num, digits = 0, 0
	}
	if digits > 0 {
		return Duration{}, fmt.Errorf("invalid duration %q", v)
	}
	if neg {
		d.Days, d.Exact = -d.Days, -d.Exact
	}
	return d, nil
}

func addDuration(t time.Time, d Duration) time.Time {
	return t.AddDate(0, 0, d.Days).Add(d.Exact)
}
