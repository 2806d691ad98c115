package feed

import (
	"fmt"
	"time"

	"github.com/teambition/rrule-go"
)

// The Gregorian calendar repeats every 400 years: 146,097 days, exactly
// 20,871 weeks and 4,800 months. A rule that matches no day of one such
// cycle (at the days its INTERVAL visits) matches none ever.
const (
	cycleDays   = 146097
	cycleWeeks  = 20871
	cycleMonths = 4800
	cycleYears  = 400
)

// freeRuleDays are the days every rule may be walked outside the feed's
// budget: four years and a day, so that a rule on February 29 matches
// however many rules before it spent the budget.
const freeRuleDays = 4*366 + 1

// neverMatches says why a rule (its options anchored at DTSTART's wall
// clock, as Series.wallRule expands it) can produce no occurrence at all,
// or "" when it may. rrule-go looks for a rule's next occurrence up to the
// year 9999 without bound: a rule that never matches (FREQ=MINUTELY;
// BYMONTH=2;BYMONTHDAY=30) costs it a walk over eight thousand years per
// look, and a sub-daily INTERVAL that never reaches its BYHOUR, BYMINUTE or
// BYSECOND (FREQ=HOURLY;INTERVAL=2;BYHOUR=1 from midnight) loops forever.
// The check walks one 400-year cycle at most, a day at a time, and stops
// at the first day that matches (the first few days for nearly every
// rule). It errs towards "may match": BYWEEKNO is not read, and BYSETPOS
// is read only for daily and longer frequencies.
//
// budget is what is left of the feed's days to walk; past its first
// freeRuleDays the walk spends it. A rule the budget cannot vouch for is
// said never to match: only a feed of many rules that match nothing for
// years spends it.
func neverMatches(opt rrule.ROption, budget *int) string {
	if why := neverReachesTime(opt); why != "" {
		return why
	}
	return neverMatchesDay(opt, budget)
}

// neverReachesTime checks a sub-daily rule's time of day: its counter
// steps by INTERVAL from DTSTART's, so it reaches only the times of day
// congruent to DTSTART's modulo gcd(INTERVAL, the day's length).
func neverReachesTime(opt rrule.ROption) string {
	step := max(opt.Interval, 1)
	ds := opt.Dtstart
	hours, minutes, seconds := orAll(opt.Byhour, 24), orAll(opt.Byminute, 60), orAll(opt.Bysecond, 60)
	var unit, at int
	switch opt.Freq {
	case rrule.HOURLY:
		unit, at, minutes, seconds = 3600, ds.Hour()*3600, []int{0}, []int{0}
	case rrule.MINUTELY:
		unit, at, seconds = 60, ds.Hour()*3600+ds.Minute()*60, []int{0}
	case rrule.SECONDLY:
		unit, at = 1, ds.Hour()*3600+ds.Minute()*60+ds.Second()
	default:
		return ""
	}
	g := gcd(step, 86400/unit) * unit
	for _, h := range hours {
		for _, m := range minutes {
			for _, s := range seconds {
				if (h*3600+m*60+s-at)%g == 0 {
					return ""
				}
			}
		}
	}
	return fmt.Sprintf("stepping by INTERVAL=%d from DTSTART's time of day never reaches its BYHOUR/BYMINUTE/BYSECOND", step)
}

// neverMatchesDay walks the days of one 400-year cycle from DTSTART that
// the rule's FREQ and INTERVAL visit, with rrule-go's reading of its BY
// parts (its defaults from DTSTART included), and says why none matches.
func neverMatchesDay(opt rrule.ROption, budget *int) string {
	ds := opt.Dtstart
	y0, m0, d0 := ds.Date()
	bymonth, bymonthday, byweekday := opt.Bymonth, opt.Bymonthday, opt.Byweekday
	if len(opt.Byweekno) == 0 && len(opt.Byyearday) == 0 && len(bymonthday) == 0 && len(byweekday) == 0 && len(opt.Byeaster) == 0 {
		switch opt.Freq {
		case rrule.YEARLY:
			if len(bymonth) == 0 {
				bymonth = []int{int(m0)}
			}
			bymonthday = []int{d0}
		case rrule.MONTHLY:
			bymonthday = []int{d0}
		case rrule.WEEKLY:
			byweekday = []rrule.Weekday{weekdayOf(ds.Weekday())}
		}
	}
	// Plain weekdays and nth weekdays (nth only within a month or year).
	var plain [7]bool
	var nth []rrule.Weekday
	hasPlain := false
	for _, w := range byweekday {
		if w.N() == 0 || opt.Freq > rrule.MONTHLY {
			plain[weekdayIndex(w)] = true
			hasPlain = true
		} else {
			nth = append(nth, w)
		}
	}
	inMonth := func(m time.Month) bool {
		if len(bymonth) == 0 {
			return true
		}
		for _, b := range bymonth {
			if b == int(m) {
				return true
			}
		}
		return false
	}
	monthRange := opt.Freq == rrule.MONTHLY || (opt.Freq == rrule.YEARLY && len(bymonth) > 0)
	step := max(opt.Interval, 1)
	wkst := weekdayIndex(opt.Wkst)
	weekOffset := (weekdayIndex(weekdayOf(ds.Weekday())) - wkst + 7) % 7
	var g int
	switch opt.Freq {
	case rrule.YEARLY:
		g = gcd(step, cycleYears)
	case rrule.MONTHLY:
		g = gcd(step, cycleMonths)
	case rrule.WEEKLY:
		g = gcd(step, cycleWeeks)
	case rrule.DAILY:
		g = gcd(step, cycleDays)
	default:
		g = 1 // sub-daily: every day may be visited
	}
	setpos := len(opt.Bysetpos) > 0 && opt.Freq <= rrule.DAILY
	times := 1
	if setpos {
		times = len(orOne(opt.Byhour, ds.Hour())) * len(orOne(opt.Byminute, ds.Minute())) * len(orOne(opt.Bysecond, ds.Second()))
	}
	period, inPeriod := -1, 0
	// The date is stepped by hand: time.Date per day would cost most of
	// the walk.
	y, m, d := y0, m0, d0-1
	mlen := daysIn(y, m)
	ylen := 365 + boolInt(daysIn(y, time.February) == 29)
	yday := time.Date(y0, m0, d0, 0, 0, 0, 0, time.UTC).YearDay() - 1
	wd := (weekdayIndex(weekdayOf(ds.Weekday())) + 6) % 7
	for i := 0; i <= cycleDays; i++ {
		if i > freeRuleDays {
			if *budget <= 0 {
				return "the feed's rules have spent the days calsyncd walks to check that a rule matches"
			}
			*budget--
		}
		d, yday, wd = d+1, yday+1, (wd+1)%7
		if d > mlen {
			d, m = 1, m+1
			if m > time.December {
				m, y, yday = time.January, y+1, 1
				ylen = 365 + boolInt(daysIn(y, time.February) == 29)
			}
			mlen = daysIn(y, m)
		}
		var p int
		switch opt.Freq {
		case rrule.YEARLY:
			p = y - y0
		case rrule.MONTHLY:
			p = (y-y0)*12 + int(m) - int(m0)
		case rrule.WEEKLY:
			p = (i + weekOffset) / 7
		default:
			p = i
		}
		if p%g != 0 {
			continue
		}
		if setpos && p != period {
			if setposHits(opt.Bysetpos, inPeriod*times) {
				return ""
			}
			period, inPeriod = p, 0
		}
		if !inMonth(m) {
			continue
		}
		if len(bymonthday) > 0 && !hasInt(bymonthday, d) && !hasInt(bymonthday, d-mlen-1) {
			continue
		}
		if len(opt.Byyearday) > 0 && !hasInt(opt.Byyearday, yday) && !hasInt(opt.Byyearday, yday-ylen-1) {
			continue
		}
		if hasPlain || len(nth) > 0 {
			// RFC 5545 reads the weekdays as a union.
			ok := plain[wd]
			pos, rlen := d, mlen
			if !monthRange {
				pos, rlen = yday, ylen
			}
			for _, w := range nth {
				if weekdayIndex(w) == wd && (w.N() == (pos-1)/7+1 || w.N() == -((rlen-pos)/7+1)) {
					ok = true
				}
			}
			if !ok {
				continue
			}
		}
		if !setpos {
			return ""
		}
		inPeriod++
	}
	if setpos && setposHits(opt.Bysetpos, inPeriod*times) {
		return ""
	}
	if setpos {
		return "BYSETPOS picks a position no period of the rule has"
	}
	return "no day matches its BYMONTH/BYMONTHDAY/BYYEARDAY/BYDAY at its FREQ and INTERVAL"
}

func setposHits(bysetpos []int, n int) bool {
	for _, p := range bysetpos {
		if (p > 0 && p <= n) || (p < 0 && -p <= n) {
			return true
		}
	}
	return false
}

var weekdays = []rrule.Weekday{rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA, rrule.SU}

// weekdayIndex is w's day, Monday 0.
func weekdayIndex(w rrule.Weekday) int {
	for i, d := range weekdays {
		if w.Nth(0) == d.Nth(0) {
			return i
		}
	}
	return 0
}

func weekdayOf(d time.Weekday) rrule.Weekday { return weekdays[(int(d)+6)%7] }

func orAll(vs []int, n int) []int {
	if len(vs) > 0 {
		return vs
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

func orOne(vs []int, v int) []int {
	if len(vs) > 0 {
		return vs
	}
	return []int{v}
}

func hasInt(vs []int, v int) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
