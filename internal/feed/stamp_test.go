package feed

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendStamp holds appendStamp to time.Format on every layout, over
// years from before 0 to past 9999, in UTC and in a zone.
func TestAppendStamp(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	times := []time.Time{{}, time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 29, 2, 30, 0, 0, berlin)}
	for range 2000 {
		times = append(times, time.Unix(r.Int64N(400*365*86400)-200*365*86400, 0).In(berlin))
	}
	for _, tm := range times {
		for _, layout := range []string{stampDate, stampLocal, stampUTC} {
			if got, want := string(appendStamp([]byte("x"), tm, layout)), "x"+tm.Format(layout); got != want {
				t.Fatalf("appendStamp(%v, %s) = %q, want %q", tm, layout, got, want)
			}
		}
	}
}

// TestDaysIn holds daysIn to time.Date's calendar over every month of the
// years a feed's dates may have.
func TestDaysIn(t *testing.T) {
	for y := minYear - 1; y <= 10000; y++ {
		for m := time.January; m <= time.December; m++ {
			if got, want := daysIn(y, m), time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day(); got != want {
				t.Fatalf("daysIn(%d, %v) = %d, want %d", y, m, got, want)
			}
		}
	}
}

// TestSeriesRuleLine holds the RRULE line Lines builds to the parts and
// bound joined, wherever the bound goes and whatever the parts hold.
func TestSeriesRuleLine(t *testing.T) {
	until := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		parts   []string
		boundAt int
		count   int
		until   time.Time
		want    string
	}{
		{[]string{"FREQ=DAILY"}, -1, 0, time.Time{}, "RRULE:FREQ=DAILY"},
		{[]string{"FREQ=DAILY", "BYDAY=MO"}, 1, 5, time.Time{}, "RRULE:FREQ=DAILY;COUNT=5;BYDAY=MO"},
		{[]string{"FREQ=DAILY", "BYDAY=MO"}, 0, 5, time.Time{}, "RRULE:COUNT=5;FREQ=DAILY;BYDAY=MO"},
		{[]string{"FREQ=DAILY", "BYDAY=MO"}, -1, 0, until, "RRULE:FREQ=DAILY;BYDAY=MO;UNTIL=20260501T100000Z"},
		{[]string{"FREQ=DAILY"}, 7, 3, time.Time{}, "RRULE:FREQ=DAILY;COUNT=3"},
		{[]string{"", "FREQ=DAILY", ""}, 1, 3, time.Time{}, "RRULE:;COUNT=3;FREQ=DAILY;"},
		{nil, -1, 2, time.Time{}, "RRULE:COUNT=2"},
		{nil, -1, 0, time.Time{}, "RRULE:"},
	} {
		s := newSeries(Time{T: until})
		s.hasRule, s.parts, s.boundAt, s.count, s.until = true, c.parts, c.boundAt, c.count, c.until
		if got := s.Lines(); len(got) != 1 || got[0] != c.want {
			t.Errorf("%+v: %q, want %q", c, got, c.want)
		}
	}
}
