package subscription

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/calsyncd/calsyncd/internal/config"
)

func hourly(t *testing.T) cron.Schedule {
	t.Helper()
	s, err := config.CronParser.Parse("@hourly")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPhasesSpreadSubscriptionsOverTheHour(t *testing.T) {
	c := NewCadence(hourly(t), time.Date(2026, 11, 29, 10, 30, 0, 0, time.UTC))
	if c.Interval != time.Hour || c.Spread != time.Hour {
		t.Fatalf("cadence = %+v", c)
	}
	perMinute := map[int]int{}
	seconds := map[int]int{}
	for i := 0; i < 100; i++ {
		p := c.Phase(fmt.Sprintf("feed-%03d", i))
		if p < 0 || p >= time.Hour {
			t.Fatalf("phase %v outside the hour", p)
		}
		if p != c.Phase(fmt.Sprintf("feed-%03d", i)) {
			t.Fatal("phase is not deterministic")
		}
		perMinute[int(p/time.Minute)]++
		seconds[int(p/time.Second)]++
	}
	for sec, n := range seconds {
		if n > 2 {
			t.Errorf("%d of 100 subscriptions start in second %d", n, sec)
		}
	}
	// 100 feeds over 60 minutes: no minute should hold more than a handful.
	for m, n := range perMinute {
		if n > 7 {
			t.Errorf("%d subscriptions in minute %d", n, m)
		}
	}
}

func TestDailyScheduleStaysNearItsHour(t *testing.T) {
	base, err := config.CronParser.Parse("0 7 * * *")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	c := NewCadence(base, start)
	if c.Interval != 24*time.Hour || c.Spread != time.Hour {
		t.Fatalf("cadence = %+v", c)
	}
	s := newSpreadSchedule(c, "team", 1)
	at := start
	for i := 0; i < 30; i++ {
		at = s.Next(at)
		// Nominal 07:00 + phase (< 1h) ± 15 min.
		lo := time.Date(at.Year(), at.Month(), at.Day(), 6, 45, 0, 0, time.UTC)
		hi := time.Date(at.Year(), at.Month(), at.Day(), 8, 15, 0, 0, time.UTC)
		if at.Before(lo) || at.After(hi) {
			t.Fatalf("run %d at %s, want between 06:45 and 08:15", i, at)
		}
	}
}

// TestCadenceInVirtualTime runs the daemon's timetable with spread schedules for two
// virtual days and checks every subscription ran about hourly, with gaps
// varied but bounded, and never two runs for one tick.
func TestCadenceInVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewCadence(hourly(t), time.Now())
		var mu sync.Mutex
		runs := map[string][]time.Time{}
		const subs = 20
		tt := newTimetable(func(id string) {
			mu.Lock()
			runs[id] = append(runs[id], time.Now())
			mu.Unlock()
		})
		for i := 0; i < subs; i++ {
			id := fmt.Sprintf("feed-%02d", i)
			tt.add(id, newSpreadSchedule(c, id, 42))
		}
		start := time.Now()
		tt.start()
		time.Sleep(48 * time.Hour)
		tt.stop()
		synctest.Wait()

		mu.Lock()
		defer mu.Unlock()
		var firsts []time.Duration
		for id, ts := range runs {
			if n := len(ts); n < 46 || n > 49 {
				t.Errorf("%s ran %d times in 48 h, want about 48", id, n)
			}
			firsts = append(firsts, ts[0].Sub(start))
			for i := 1; i < len(ts); i++ {
				gap := ts[i].Sub(ts[i-1])
				if gap < 30*time.Minute || gap > 90*time.Minute {
					t.Errorf("%s: gap %v between runs %d and %d, want within [30m, 90m]", id, gap, i-1, i)
				}
			}
			mean := ts[len(ts)-1].Sub(ts[0]) / time.Duration(len(ts)-1)
			if mean < 57*time.Minute || mean > 63*time.Minute {
				t.Errorf("%s: mean gap %v, want about 1h", id, mean)
			}
		}
		sort.Slice(firsts, func(i, j int) bool { return firsts[i] < firsts[j] })
		if spread := firsts[len(firsts)-1] - firsts[0]; spread < 30*time.Minute {
			t.Errorf("first runs of %d subscriptions span only %v", subs, spread)
		}
	})
}

func TestErrorBackoffGrowsToItsCap(t *testing.T) {
	tests := []struct {
		errors int
		want   time.Duration
	}{
		{3, time.Hour}, {4, 2 * time.Hour}, {5, 4 * time.Hour}, {7, 16 * time.Hour}, {8, 24 * time.Hour}, {50, 24 * time.Hour},
	}
	for _, tt := range tests {
		if got := errorBackoff(time.Hour, tt.errors, 3, 24*time.Hour); got != tt.want {
			t.Errorf("errorBackoff(errors=%d) = %v, want %v", tt.errors, got, tt.want)
		}
	}
}

// TestSpreadScheduleNeverAnswersThePast: a base schedule with no
// activation (robfig/cron answers the zero time after looking five years
// ahead) must give cron the zero time ("never"), not a time in the past
// that it would run at once, again and again.
func TestSpreadScheduleNeverAnswersThePast(t *testing.T) {
	now := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		spec  string
		never bool
	}{
		"31 February":             {spec: "0 0 31 2 *", never: true},
		"30 February, in a zone":  {spec: "CRON_TZ=Europe/Berlin 0 7 30 2 *", never: true},
		"31 April":                {spec: "15 3 31 4 *", never: true},
		"hourly":                  {spec: "@hourly"},
		"29 February (leap year)": {spec: "0 0 29 2 *"},
		"every second":            {spec: "@every 1s"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			base, err := config.CronParser.Parse(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			s := newSpreadSchedule(NewCadence(base, now), "team", 1)
			s.runSoon(now.Add(time.Minute)) // a catch-up asked for at start
			// Twenty leap days reach 2096, after which robfig/cron finds
			// none within five years (2100 is no leap year): "never" then.
			at := now
			for i := range 20 {
				next := s.Next(at)
				switch {
				case tt.never && !next.IsZero():
					t.Fatalf("Next #%d after %s = %s, want the zero time (never)", i, at, next)
				case next.IsZero() && !tt.never && i < 10:
					t.Fatalf("Next #%d after %s is the zero time, want a run", i, at)
				case !next.IsZero() && !next.After(at):
					t.Fatalf("Next #%d after %s = %s, not after it", i, at, next)
				}
				if next.IsZero() {
					break
				}
				at = next
			}
		})
	}
}

// TestARestartKeepsTheCadence: a daemon restarted at any time up to the
// catch-up threshold after a subscription's last run runs it next 30 to
// 90 minutes after that run, as an uninterrupted daemon would (the gaps
// TestCadenceInVirtualTime holds), never before the restart. Measured
// from the restart instead, a subscription whose tick was under half an
// hour away waited for the one after it: up to 2¼ hours without a run.
func TestARestartKeepsTheCadence(t *testing.T) {
	start := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	c := NewCadence(hourly(t), start)
	for i := range 40 {
		id := fmt.Sprintf("feed-%02d", i)
		s := newSpreadSchedule(c, id, 42)
		last := s.Next(start)
		for range 5 {
			last = s.Next(last)
		}
		for down := time.Second; down <= c.Interval+c.Spread/4; down += 5 * time.Minute {
			restart := last.Add(down)
			again := newSpreadSchedule(c, id, uint64(down))
			again.ranBefore(last)
			next := again.Next(restart)
			if gap := next.Sub(last); !next.After(restart) || gap < 30*time.Minute || gap > 90*time.Minute {
				t.Errorf("%s last ran at %s, restarted %v later: next run %s (%v after the last), want 30-90 min after it and after the restart",
					id, last.Format("15:04:05"), down, next.Format("15:04:05"), gap)
			}
		}
	}
}
