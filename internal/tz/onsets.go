package tz

import (
	"time"

	"github.com/teambition/rrule-go"
)

// onsets iterates a rule's occurrences as rrule-go does. The rule nearly
// every VTIMEZONE has (FREQ=YEARLY;BYMONTH=m;BYDAY=±nWD: "the last Sunday
// of March") is computed a year at a time; rrule-go walks a mask of every
// day of every year for it, which made matching a feed's zones most of
// the cost of reading a feed of custom zones. Any other rule goes to
// rrule-go. ok is false when rrule-go refuses the rule.
func onsets(opt *rrule.ROption) (next func() (time.Time, bool), ok bool) {
	if next, ok := yearlyOnsets(opt); ok {
		return next, true
	}
	r, err := rrule.NewRRule(*opt)
	if err != nil {
		return nil, false
	}
	return r.Iterator(), true
}

// yearlyOnsets is onsets for FREQ=YEARLY with one BYMONTH and one BYDAY
// with an ordinal (±1 to ±5), no COUNT, an INTERVAL of 1 and no other
// part; ok is false for any other rule. Like rrule-go, it starts in
// DTSTART's year at DTSTART's time of day, leaves out occurrences before
// DTSTART, skips a year whose month has no such weekday, and ends after
// UNTIL (when there is none, 2^63-1 nanoseconds after DTSTART) or at
// year 9999.
func yearlyOnsets(opt *rrule.ROption) (func() (time.Time, bool), bool) {
	others := len(opt.Bysetpos) + len(opt.Bymonthday) + len(opt.Byyearday) + len(opt.Byweekno) +
		len(opt.Byhour) + len(opt.Byminute) + len(opt.Bysecond) + len(opt.Byeaster)
	if opt.Freq != rrule.YEARLY || opt.Interval > 1 || opt.Count != 0 || others > 0 ||
		len(opt.Bymonth) != 1 || len(opt.Byweekday) != 1 || opt.Dtstart.IsZero() {
		return nil, false
	}
	wd := opt.Byweekday[0]
	month, n := opt.Bymonth[0], wd.N()
	if month < 1 || month > 12 || n == 0 || n > 5 || n < -5 {
		return nil, false
	}
	weekday := time.Weekday((wd.Day() + 1) % 7) // rrule-go counts from Monday
	start := opt.Dtstart.Truncate(time.Second)
	until := start.Add(time.Duration(1<<63 - 1))
	if !opt.Until.IsZero() {
		until = opt.Until.Truncate(time.Second)
	}
	loc := start.Location()
	h, mi, s := start.Clock()
	year := start.Year()
	return func() (time.Time, bool) {
		for ; year <= 9999; year++ {
			day, ok := nthWeekday(year, time.Month(month), weekday, n)
			if !ok {
				continue
			}
			t := time.Date(year, time.Month(month), day, h, mi, s, 0, loc)
			if t.Before(start) {
				continue
			}
			if t.After(until) {
				break
			}
			year++
			return t, true
		}
		year = 10000
		return time.Time{}, false
	}, true
}

// nthWeekday is the day of the month of its nth weekday (n < 0: counted
// from the end); ok is false when the month has no such day.
func nthWeekday(year int, month time.Month, wd time.Weekday, n int) (int, bool) {
	days := time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
	if n > 0 {
		first := time.Date(year, month, 1, 0, 0, 0, 0, time.UTC).Weekday()
		day := 1 + (int(wd)-int(first)+7)%7 + (n-1)*7
		return day, day <= days
	}
	last := time.Date(year, month, days, 0, 0, 0, 0, time.UTC).Weekday()
	day := days - (int(last)-int(wd)+7)%7 + (n+1)*7
	return day, day >= 1
}
