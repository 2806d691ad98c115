package preview

import (
	"strconv"
	"strings"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
)

// seriesText says a series in a few words from its recurrence lines
// ("weekly on Mon, 26 times", "every 2 weeks on Mon, Thu, until
// 2027-06-01", "monthly on the last Sun, except 1 date"). A rule it does
// not fully understand (more than one RRULE, parts beyond FREQ, INTERVAL,
// BYDAY, BYMONTHDAY, COUNT, UNTIL and WKST) is given as written.
func seriesText(lines []string, start feed.Time) string {
	var rule string
	rdates, exdates := 0, 0
	for _, l := range lines {
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			return strings.Join(lines, " ")
		}
		name, _, _ = strings.Cut(name, ";")
		switch strings.ToUpper(name) {
		case "RRULE":
			if rule != "" {
				return strings.Join(lines, " ")
			}
			rule = value
		case "RDATE":
			rdates += strings.Count(value, ",") + 1
		case "EXDATE":
			exdates += strings.Count(value, ",") + 1
		default:
			return strings.Join(lines, " ")
		}
	}
	var parts []string
	if rule != "" {
		text, ok := ruleText(rule, start)
		if !ok {
			return strings.Join(lines, " ")
		}
		parts = append(parts, text)
	}
	if rdates > 0 {
		if rule == "" {
			parts = append(parts, plural(rdates, "date", "dates"))
		} else {
			parts = append(parts, "and "+plural(rdates, "more date", "more dates"))
		}
	}
	if exdates > 0 {
		parts = append(parts, "except "+plural(exdates, "date", "dates"))
	}
	return strings.Join(parts, ", ")
}

var frequencies = map[string][2]string{ // FREQ → its adverb, its unit
	"DAILY": {"daily", "days"}, "WEEKLY": {"weekly", "weeks"}, "MONTHLY": {"monthly", "months"}, "YEARLY": {"yearly", "years"},
	"HOURLY": {"hourly", "hours"},
}

var weekdays = map[string]string{"MO": "Mon", "TU": "Tue", "WE": "Wed", "TH": "Thu", "FR": "Fri", "SA": "Sat", "SU": "Sun"}

var ordinals = map[string]string{"1": "1st", "2": "2nd", "3": "3rd", "4": "4th", "5": "5th", "-1": "last", "-2": "second to last"}

// ruleText says one RRULE value, or reports that it cannot say it whole.
func ruleText(rule string, start feed.Time) (string, bool) {
	r, ok := readRule(rule)
	if !ok {
		return "", false
	}
	f, ok := frequencies[r.freq]
	if !ok {
		return "", false
	}
	text := f[0]
	if r.interval != "" && r.interval != "1" {
		n, err := strconv.Atoi(r.interval)
		if err != nil || n < 1 {
			return "", false
		}
		text = "every " + r.interval + " " + f[1]
	}
	days, okDays := daysText(r.byday, r.freq)
	monthDay, okMonthDay := monthDayText(r.bymonthday, r.freq)
	count, okCount := countText(r.count)
	until, okUntil := untilText(r.until, start)
	if !okDays || !okMonthDay || !okCount || !okUntil {
		return "", false
	}
	return text + days + monthDay + count + until, true
}

// rruleParts are the parts of an RRULE that a few words can say.
type rruleParts struct{ freq, interval, byday, bymonthday, count, until string }

// readRule splits an RRULE value into its parts; ok is false when it has
// a part beyond them (WKST changes nothing the words say).
func readRule(rule string) (r rruleParts, ok bool) {
	for _, part := range strings.Split(rule, ";") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return r, false
		}
		switch strings.ToUpper(k) {
		case "FREQ":
			r.freq = strings.ToUpper(v)
		case "INTERVAL":
			r.interval = v
		case "BYDAY":
			r.byday = strings.ToUpper(v)
		case "BYMONTHDAY":
			r.bymonthday = v
		case "COUNT":
			r.count = v
		case "UNTIL":
			r.until = v
		case "WKST":
			// the week's first day changes nothing a few words say
		default:
			return r, false
		}
	}
	return r, true
}

// daysText says BYDAY: " on Mon, Thu", " on the last Sun" (an ordinal
// only in a monthly rule).
func daysText(byday, freq string) (string, bool) {
	if byday == "" {
		return "", true
	}
	var days []string
	for _, d := range strings.Split(byday, ",") {
		if len(d) < 2 {
			return "", false
		}
		name, ok := weekdays[d[len(d)-2:]]
		if !ok {
			return "", false
		}
		if n := d[:len(d)-2]; n != "" {
			ord, ok := ordinals[strings.TrimPrefix(n, "+")]
			if !ok || freq != "MONTHLY" {
				return "", false
			}
			name = "the " + ord + " " + name
		}
		days = append(days, name)
	}
	return " on " + strings.Join(days, ", "), true
}

// monthDayText says a monthly rule's one BYMONTHDAY: " on day 15".
func monthDayText(bymonthday, freq string) (string, bool) {
	if bymonthday == "" {
		return "", true
	}
	if freq != "MONTHLY" || strings.Contains(bymonthday, ",") {
		return "", false
	}
	n, err := strconv.Atoi(bymonthday)
	if err != nil || n < 1 || n > 31 {
		return "", false
	}
	return " on day " + bymonthday, true
}

// countText says COUNT: ", 26 times".
func countText(count string) (string, bool) {
	if count == "" {
		return "", true
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		return "", false
	}
	return ", " + plural(n, "time", "times"), true
}

// untilText says UNTIL: ", until 2027-06-01".
func untilText(until string, start feed.Time) (string, bool) {
	if until == "" {
		return "", true
	}
	d, ok := untilDate(until, start)
	if !ok {
		return "", false
	}
	return ", until " + d, true
}

// untilDate is UNTIL's date as the series' zone has it.
func untilDate(v string, start feed.Time) (string, bool) {
	if t, err := time.Parse("20060102", v); err == nil {
		return t.Format("2006-01-02"), true
	}
	t, err := time.Parse("20060102T150405Z", v)
	if err != nil {
		return "", false
	}
	if start.AllDay {
		return t.UTC().Format("2006-01-02"), true
	}
	return inZone(feed.Time{T: t, Zone: start.Zone}).Format("2006-01-02"), true
}
