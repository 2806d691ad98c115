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
	var nth [7]rrule.Weekday
	rule := newDayRule(opt, &nth)
	periods := newPeriodCounter(opt)
	// With BYSETPOS the matching days of each period are counted (plain
	// locals: the walk is for every rule of a feed).
	setpos, times := setposTimes(opt)
	period, inPeriod := -1, 0
	day := dayBefore(opt.Dtstart)
	for i := 0; i <= cycleDays; i++ {
		if i > freeRuleDays {
			if *budget <= 0 {
				return "the feed's rules have spent the days calsyncd walks to check that a rule matches"
			}
			*budget--
		}
		day.d, day.yday, day.wd = day.d+1, day.yday+1, (day.wd+1)%7
		if day.d > day.mlen {
			day.nextMonth()
		}
		p := periods.index(i, &day)
		if p%periods.stride != 0 {
			continue
		}
		if setpos && p != period {
			if setposHits(opt.Bysetpos, inPeriod*times) {
				return ""
			}
			period, inPeriod = p, 0
		}
		if !rule.inSets(&day) || rule.hasRest && !rule.passesRest(&day) {
			continue
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

// dayRule is what a rule asks of a day: its BY parts, with the defaults
// rrule-go takes from DTSTART when none names a day. Months, month days
// and weekdays are bit sets (bit n for value n): the walk asks them of
// every day.
type dayRule struct {
	// months are BYMONTH's months, every month without it.
	months uint16
	// monthdays are BYMONTHDAY's days from the month's start,
	// lastMonthdays its days from its end (bit 1 for -1); byMonthday is
	// false without BYMONTHDAY.
	byMonthday               bool
	monthdays, lastMonthdays uint64
	byyearday                []int
	// plain are the weekdays every week matches (Monday bit 0); nth the
	// weekdays that match at a position within a month or year (BYDAY=2MO).
	plain uint8
	nth   []rrule.Weekday
	// monthRange is that nth positions count within the month, not the
	// year.
	monthRange bool
	// weekdays are the weekdays inSets lets through: the plain ones when
	// the rule has neither year days nor nth weekdays, every one
	// otherwise; hasRest is that it has them.
	weekdays uint8
	hasRest  bool
}

// newDayRule reads the rule's BY parts; nth is room for its nth
// weekdays, on the caller's stack (the walk is for every rule of a feed).
func newDayRule(opt rrule.ROption, nth *[7]rrule.Weekday) dayRule {
	ds := opt.Dtstart
	_, m0, d0 := ds.Date()
	r := dayRule{months: monthSet(opt.Bymonth), byyearday: opt.Byyearday, nth: nth[:0]}
	r.setMonthdays(opt.Bymonthday)
	hasMonths := len(opt.Bymonth) > 0
	byweekday := opt.Byweekday
	if len(opt.Byweekno) == 0 && len(opt.Byyearday) == 0 && len(opt.Bymonthday) == 0 && len(byweekday) == 0 && len(opt.Byeaster) == 0 {
		switch opt.Freq {
		case rrule.YEARLY:
			if !hasMonths {
				r.months, hasMonths = 1<<m0, true
			}
			r.setMonthdays([]int{d0})
		case rrule.MONTHLY:
			r.setMonthdays([]int{d0})
		case rrule.WEEKLY:
			byweekday = []rrule.Weekday{weekdayOf(ds.Weekday())}
		}
	}
	for _, w := range byweekday {
		if w.N() == 0 || opt.Freq > rrule.MONTHLY {
			r.plain |= 1 << weekdayIndex(w)
		} else {
			r.nth = append(r.nth, w)
		}
	}
	r.monthRange = opt.Freq == rrule.MONTHLY || (opt.Freq == rrule.YEARLY && hasMonths)
	r.hasRest = len(r.byyearday) > 0 || len(r.nth) > 0
	r.weekdays = 0x7f
	if r.plain != 0 && !r.hasRest {
		r.weekdays = r.plain
	}
	return r
}

// monthSet is the set of months ms names, every month when it names none.
func monthSet(ms []int) uint16 {
	if len(ms) == 0 {
		return ^uint16(0)
	}
	var set uint16
	for _, m := range ms {
		if m >= 1 && m <= 12 {
			set |= 1 << m
		}
	}
	return set
}

// setMonthdays sets BYMONTHDAY's days; a day no month has matches none.
func (r *dayRule) setMonthdays(ds []int) {
	r.byMonthday = len(ds) > 0
	r.monthdays, r.lastMonthdays = 0, 0
	for _, d := range ds {
		switch {
		case d >= 1 && d <= 31:
			r.monthdays |= 1 << d
		case d <= -1 && d >= -31:
			r.lastMonthdays |= 1 << -d
		}
	}
}

// inSets says whether the day is in the rule's month, month day and
// weekday sets; the walk asks it of every day it visits, and asks
// passesRest only of the days it lets through, when the rule has year
// days or nth weekdays.
func (r *dayRule) inSets(c *civilDay) bool {
	return r.months>>c.m&1 != 0 && r.weekdays>>c.wd&1 != 0 &&
		(!r.byMonthday || r.monthdays>>c.d&1 != 0 || r.lastMonthdays>>(c.mlen+1-c.d)&1 != 0)
}

// passesRest says whether the day passes BYYEARDAY and BYDAY, the plain
// weekdays and the nth ones.
func (r *dayRule) passesRest(c *civilDay) bool {
	if len(r.byyearday) > 0 && !hasInt(r.byyearday, c.yday) && !hasInt(r.byyearday, c.yday-c.ylen-1) {
		return false
	}
	if r.plain == 0 && len(r.nth) == 0 {
		return true
	}
	// RFC 5545 reads the weekdays as a union.
	return r.plain>>c.wd&1 != 0 || r.nthMatches(c)
}

// nthMatches says whether the day is one of the rule's nth weekdays of
// its month or year.
func (r *dayRule) nthMatches(c *civilDay) bool {
	pos, rlen := c.d, c.mlen
	if !r.monthRange {
		pos, rlen = c.yday, c.ylen
	}
	for _, w := range r.nth {
		if weekdayIndex(w) == c.wd && (w.N() == (pos-1)/7+1 || w.N() == -((rlen-pos)/7+1)) {
			return true
		}
	}
	return false
}

// civilDay is a day of the walk, stepped by hand: time.Date per day would
// cost most of the walk.
type civilDay struct {
	y       int
	m       time.Month
	d, mlen int
	// yday is the day of the year (1-based), ylen the year's length; wd
	// the weekday, Monday 0.
	yday, ylen, wd int
}

// dayBefore is the day before t's date, so that the walk's first step is
// to t's.
func dayBefore(t time.Time) civilDay {
	y, m, d := t.Date()
	return civilDay{
		y: y, m: m, d: d - 1, mlen: daysIn(y, m),
		yday: time.Date(y, m, d, 0, 0, 0, 0, time.UTC).YearDay() - 1,
		ylen: yearDays(y),
		wd:   (weekdayIndex(weekdayOf(t.Weekday())) + 6) % 7,
	}
}

// nextMonth steps from the last day of a month to the first of the next;
// the walk steps within a month itself, without a call per day.
func (c *civilDay) nextMonth() {
	c.d, c.m = 1, c.m+1
	if c.m > time.December {
		c.m, c.y, c.yday = time.January, c.y+1, 1
		c.ylen = yearDays(c.y)
	}
	c.mlen = daysIn(c.y, c.m)
}

func yearDays(y int) int { return 365 + boolInt(daysIn(y, time.February) == 29) }

// periodCounter numbers the rule's periods (its years, months, weeks or
// days from DTSTART's); stride is the INTERVAL reduced by the cycle's
// length, the periods a cycle visits being the multiples of it. origin is
// DTSTART's year, month (counted from year 0) or weekday from WKST. It is
// small enough for the compiler to keep in registers through the walk.
type periodCounter struct {
	freq   rrule.Frequency
	origin int
	stride int
}

// cyclePeriods is how many of a frequency's periods one cycle has.
var cyclePeriods = map[rrule.Frequency]int{
	rrule.YEARLY:  cycleYears,
	rrule.MONTHLY: cycleMonths,
	rrule.WEEKLY:  cycleWeeks,
	rrule.DAILY:   cycleDays,
}

func newPeriodCounter(opt rrule.ROption) periodCounter {
	ds := opt.Dtstart
	pc := periodCounter{freq: opt.Freq, stride: 1} // sub-daily: every day may be visited
	switch opt.Freq {
	case rrule.YEARLY:
		pc.origin = ds.Year()
	case rrule.MONTHLY:
		pc.origin = ds.Year()*12 + int(ds.Month())
	case rrule.WEEKLY:
		pc.origin = (weekdayIndex(weekdayOf(ds.Weekday())) - weekdayIndex(opt.Wkst) + 7) % 7
	}
	if n, ok := cyclePeriods[opt.Freq]; ok {
		pc.stride = gcd(max(opt.Interval, 1), n)
	}
	return pc
}

// index is the period of the walk's i-th day c.
func (pc periodCounter) index(i int, c *civilDay) int {
	switch pc.freq {
	case rrule.YEARLY:
		return c.y - pc.origin
	case rrule.MONTHLY:
		return c.y*12 + int(c.m) - pc.origin
	case rrule.WEEKLY:
		return (i + pc.origin) / 7
	default:
		return i
	}
}

// setposTimes says whether the walk reads BYSETPOS (only at daily and
// longer frequencies), and how many occurrences each matching day stands
// for: one per time of day the rule gives it.
func setposTimes(opt rrule.ROption) (setpos bool, times int) {
	if len(opt.Bysetpos) == 0 || opt.Freq > rrule.DAILY {
		return false, 1
	}
	ds := opt.Dtstart
	return true, len(orOne(opt.Byhour, ds.Hour())) * len(orOne(opt.Byminute, ds.Minute())) * len(orOne(opt.Bysecond, ds.Second()))
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
