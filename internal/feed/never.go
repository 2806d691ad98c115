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
	var room dayRuleRoom
	rule := newDayRule(opt, &room)
	periods := newPeriodCounter(opt)
	set := newSetposCount(opt)
	day := dayBefore(opt.Dtstart)
	for i := 0; i <= cycleDays; i++ {
		if i > freeRuleDays {
			if *budget <= 0 {
				return "the feed's rules have spent the days calsyncd walks to check that a rule matches"
			}
			*budget--
		}
		day.next()
		p := periods.index(i, &day)
		if p%periods.stride != 0 {
			continue
		}
		if set.on && set.enter(p) {
			return ""
		}
		if !rule.matches(&day) {
			continue
		}
		if !set.on {
			return ""
		}
		set.inPeriod++
	}
	if set.on && set.hits() {
		return ""
	}
	if set.on {
		return "BYSETPOS picks a position no period of the rule has"
	}
	return "no day matches its BYMONTH/BYMONTHDAY/BYYEARDAY/BYDAY at its FREQ and INTERVAL"
}

// dayRule is what a rule asks of a day: its BY parts, with the defaults
// rrule-go takes from DTSTART when none names a day.
type dayRule struct {
	bymonth, bymonthday, byyearday []int
	// plain are the weekdays every week matches; nth the weekdays that
	// match at a position within a month or year (BYDAY=2MO).
	plain    [7]bool
	hasPlain bool
	nth      []rrule.Weekday
	// monthRange is that nth positions count within the month, not the
	// year.
	monthRange bool
}

// dayRuleRoom is room for what a dayRule does not take from the rule's
// options, on its caller's stack: the walk is for every rule of a feed.
type dayRuleRoom struct {
	month, monthday [1]int
	weekday         [1]rrule.Weekday
	nth             [7]rrule.Weekday
}

func newDayRule(opt rrule.ROption, room *dayRuleRoom) dayRule {
	ds := opt.Dtstart
	_, m0, d0 := ds.Date()
	r := dayRule{bymonth: opt.Bymonth, bymonthday: opt.Bymonthday, byyearday: opt.Byyearday, nth: room.nth[:0]}
	byweekday := opt.Byweekday
	if len(opt.Byweekno) == 0 && len(opt.Byyearday) == 0 && len(r.bymonthday) == 0 && len(byweekday) == 0 && len(opt.Byeaster) == 0 {
		switch opt.Freq {
		case rrule.YEARLY:
			if len(r.bymonth) == 0 {
				room.month[0] = int(m0)
				r.bymonth = room.month[:]
			}
			room.monthday[0] = d0
			r.bymonthday = room.monthday[:]
		case rrule.MONTHLY:
			room.monthday[0] = d0
			r.bymonthday = room.monthday[:]
		case rrule.WEEKLY:
			room.weekday[0] = weekdayOf(ds.Weekday())
			byweekday = room.weekday[:]
		}
	}
	for _, w := range byweekday {
		if w.N() == 0 || opt.Freq > rrule.MONTHLY {
			r.plain[weekdayIndex(w)] = true
			r.hasPlain = true
		} else {
			r.nth = append(r.nth, w)
		}
	}
	r.monthRange = opt.Freq == rrule.MONTHLY || (opt.Freq == rrule.YEARLY && len(r.bymonth) > 0)
	return r
}

// matches says whether the day passes every BY part.
func (r *dayRule) matches(c *civilDay) bool {
	if len(r.bymonth) > 0 && !hasInt(r.bymonth, int(c.m)) {
		return false
	}
	if len(r.bymonthday) > 0 && !hasInt(r.bymonthday, c.d) && !hasInt(r.bymonthday, c.d-c.mlen-1) {
		return false
	}
	if len(r.byyearday) > 0 && !hasInt(r.byyearday, c.yday) && !hasInt(r.byyearday, c.yday-c.ylen-1) {
		return false
	}
	if !r.hasPlain && len(r.nth) == 0 {
		return true
	}
	// RFC 5545 reads the weekdays as a union.
	if r.plain[c.wd] {
		return true
	}
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

// dayBefore is the day before t's date, so that the first next is t's.
func dayBefore(t time.Time) civilDay {
	y, m, d := t.Date()
	return civilDay{
		y: y, m: m, d: d - 1, mlen: daysIn(y, m),
		yday: time.Date(y, m, d, 0, 0, 0, 0, time.UTC).YearDay() - 1,
		ylen: yearDays(y),
		wd:   (weekdayIndex(weekdayOf(t.Weekday())) + 6) % 7,
	}
}

func (c *civilDay) next() {
	c.d, c.yday, c.wd = c.d+1, c.yday+1, (c.wd+1)%7
	if c.d <= c.mlen {
		return
	}
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
// length, the periods a cycle visits being the multiples of it.
type periodCounter struct {
	freq       rrule.Frequency
	y0         int
	m0         time.Month
	weekOffset int
	stride     int
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
	y0, m0, _ := ds.Date()
	pc := periodCounter{
		freq: opt.Freq, y0: y0, m0: m0,
		weekOffset: (weekdayIndex(weekdayOf(ds.Weekday())) - weekdayIndex(opt.Wkst) + 7) % 7,
		stride:     1, // sub-daily: every day may be visited
	}
	if n, ok := cyclePeriods[opt.Freq]; ok {
		pc.stride = gcd(max(opt.Interval, 1), n)
	}
	return pc
}

// index is the period of the walk's i-th day c.
func (pc *periodCounter) index(i int, c *civilDay) int {
	switch pc.freq {
	case rrule.YEARLY:
		return c.y - pc.y0
	case rrule.MONTHLY:
		return (c.y-pc.y0)*12 + int(c.m) - int(pc.m0)
	case rrule.WEEKLY:
		return (i + pc.weekOffset) / 7
	default:
		return i
	}
}

// setposCount counts the matching days of the current period, for
// BYSETPOS (read only at daily and longer frequencies); each matching day
// stands for times occurrences, one per time of day the rule gives it.
type setposCount struct {
	on               bool
	bysetpos         []int
	times            int
	period, inPeriod int
}

func newSetposCount(opt rrule.ROption) setposCount {
	ds := opt.Dtstart
	s := setposCount{on: len(opt.Bysetpos) > 0 && opt.Freq <= rrule.DAILY, bysetpos: opt.Bysetpos, times: 1, period: -1}
	if s.on {
		s.times = len(orOne(opt.Byhour, ds.Hour())) * len(orOne(opt.Byminute, ds.Minute())) * len(orOne(opt.Bysecond, ds.Second()))
	}
	return s
}

// enter moves to period p, saying whether the period it closes has an
// occurrence at a BYSETPOS position.
func (s *setposCount) enter(p int) bool {
	if p == s.period {
		return false
	}
	if s.hits() {
		return true
	}
	s.period, s.inPeriod = p, 0
	return false
}

func (s *setposCount) hits() bool { return setposHits(s.bysetpos, s.inPeriod*s.times) }

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
