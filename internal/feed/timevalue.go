package feed

import (
	"fmt"
	"strings"
	"time"

	ical "github.com/arran4/golang-ical"
	"github.com/calsyncd/calsyncd/internal/tz"
)

// Time values: DATE and DATE-TIME with their TZID, recurrence ids as keys
// store them, and RFC 5545 durations.

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
