package tz

import (
	"fmt"
	"testing"
	"time"

	"github.com/teambition/rrule-go"
)

// TestYearlyOnsetsMatchRRule holds the per-year computation to rrule-go's
// iteration, occurrence by occurrence, for every month, weekday and
// ordinal, with DTSTARTs before, on and after the year's onset (Outlook's
// 1601 moved to 1900, leap years, mid-year starts), with and without
// UNTIL, and for the rules it must leave to rrule-go.
func TestYearlyOnsetsMatchRRule(t *testing.T) {
	starts := []time.Time{
		time.Date(1900, 1, 1, 2, 0, 0, 0, time.UTC),
		time.Date(1970, 3, 29, 2, 0, 0, 0, time.UTC),
		time.Date(2007, 11, 4, 1, 59, 59, 0, time.UTC),
		time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC),
		time.Date(2030, 12, 31, 0, 0, 0, 500, time.UTC),
	}
	untils := []time.Time{{}, time.Date(2031, 10, 26, 3, 0, 0, 0, time.UTC)}
	rules := 0
	for month := 1; month <= 12; month++ {
		for _, n := range []int{-5, -4, -2, -1, 1, 2, 4, 5} {
			for day := range 7 {
				wd := []rrule.Weekday{rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA, rrule.SU}[day]
				for si, start := range starts {
					if (month+day+n+si)%3 != 0 && si != 0 {
						continue // a third of the mid-year starts keeps the test quick
					}
					for _, until := range untils {
						opt := rrule.ROption{Freq: rrule.YEARLY, Dtstart: start, Until: until, Bymonth: []int{month}, Byweekday: []rrule.Weekday{wd.Nth(n)}}
						compareOnsets(t, opt, 80)
						rules++
					}
				}
			}
		}
	}
	if rules < 1000 {
		t.Fatalf("only %d rules compared", rules)
	}
	// The whole span once: to year 2192, where a rule without UNTIL ends.
	compareOnsets(t, rrule.ROption{Freq: rrule.YEARLY, Dtstart: starts[0], Bymonth: []int{10}, Byweekday: []rrule.Weekday{rrule.SU.Nth(-1)}}, 400)
	for _, opt := range []rrule.ROption{
		{Freq: rrule.YEARLY, Dtstart: starts[0], Count: 10, Bymonth: []int{3}, Byweekday: []rrule.Weekday{rrule.SU.Nth(-1)}},
		{Freq: rrule.YEARLY, Dtstart: starts[0], Interval: 2, Bymonth: []int{3}, Byweekday: []rrule.Weekday{rrule.SU.Nth(-1)}},
		{Freq: rrule.YEARLY, Dtstart: starts[0], Bymonth: []int{3}, Byweekday: []rrule.Weekday{rrule.SU}},
		{Freq: rrule.YEARLY, Dtstart: starts[0], Bymonth: []int{3, 10}, Byweekday: []rrule.Weekday{rrule.SU.Nth(-1)}},
		{Freq: rrule.MONTHLY, Dtstart: starts[0], Byweekday: []rrule.Weekday{rrule.SU.Nth(-1)}},
		{Freq: rrule.YEARLY, Dtstart: starts[0], Bymonth: []int{3}, Byweekday: []rrule.Weekday{rrule.SU.Nth(9)}},
	} {
		if _, ok := yearlyOnsets(&opt); ok {
			t.Errorf("%v: computed per year, want rrule-go", fmt.Sprint(opt))
		}
		compareOnsets(t, opt, 40)
	}
}

func compareOnsets(t *testing.T, opt rrule.ROption, limit int) {
	t.Helper()
	r, err := rrule.NewRRule(opt)
	if err != nil {
		t.Fatal(err)
	}
	want := r.Iterator()
	got, ok := onsets(&opt)
	if !ok {
		t.Fatalf("%v: refused", opt)
	}
	for i := range limit {
		w, wok := want()
		g, gok := got()
		if wok != gok || !w.Equal(g) || w.Location() != g.Location() {
			t.Fatalf("rule %v, occurrence %d: got %v %v, rrule-go %v %v", opt, i, g, gok, w, wok)
		}
		if !wok {
			return
		}
	}
}
