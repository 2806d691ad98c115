package subscription

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robfig/cron/v3"
)

// never is a schedule with no next run.
type never struct{}

func (never) Next(time.Time) time.Time { return time.Time{} }

// runLog records when each id ran.
type runLog struct {
	mu   sync.Mutex
	runs map[string][]time.Time
}

func (l *runLog) record(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.runs == nil {
		l.runs = map[string][]time.Time{}
	}
	l.runs[id] = append(l.runs[id], time.Now())
}

func (l *runLog) of(id string) []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.runs[id])
}

// TestTimetableRunsEachAtItsTimes: every entry runs exactly at the times
// its schedule gives, each once, entries that never run are never run,
// and a removed entry stops.
func TestTimetableRunsEachAtItsTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log runLog
		tt := newTimetable(log.record)
		start := time.Now()
		schedules := map[string]cron.Schedule{
			"every-7m":  cron.Every(7 * time.Minute),
			"every-20m": cron.Every(20 * time.Minute),
			"every-1h":  cron.Every(time.Hour),
			"never":     never{},
			"removed":   cron.Every(10 * time.Minute),
		}
		for id, s := range schedules {
			tt.add(id, s)
		}
		if got := tt.next("every-20m"); !got.Equal(start.Add(20 * time.Minute)) {
			t.Errorf("next(every-20m) = %v, want %v", got, start.Add(20*time.Minute))
		}
		if got := tt.next("never"); !got.IsZero() {
			t.Errorf("next(never) = %v, want zero", got)
		}
		tt.start()
		time.Sleep(35 * time.Minute)
		tt.remove("removed")
		time.Sleep(3*time.Hour - 35*time.Minute + time.Second)
		tt.stop()
		synctest.Wait()

		for _, tc := range []struct {
			id    string
			every time.Duration
			until time.Duration
		}{
			{"every-7m", 7 * time.Minute, 3 * time.Hour},
			{"every-20m", 20 * time.Minute, 3 * time.Hour},
			{"every-1h", time.Hour, 3 * time.Hour},
			{"removed", 10 * time.Minute, 35 * time.Minute},
		} {
			var want []time.Time
			for at := tc.every; at <= tc.until; at += tc.every {
				want = append(want, start.Add(at))
			}
			if got := log.of(tc.id); !slices.EqualFunc(got, want, time.Time.Equal) {
				t.Errorf("%s ran at %v, want %v", tc.id, offsets(got, start), offsets(want, start))
			}
		}
		if got := log.of("never"); len(got) > 0 {
			t.Errorf("a schedule that never fires ran %d times", len(got))
		}
		if got := tt.next("removed"); !got.IsZero() {
			t.Errorf("next(removed) = %v, want zero", got)
		}
	})
}

func offsets(ts []time.Time, from time.Time) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = t.Sub(from)
	}
	return out
}

// TestTimetableWakesForAnEarlierEntry: an entry added while the loop
// sleeps until a later one runs at its own time, not at the later one's.
func TestTimetableWakesForAnEarlierEntry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log runLog
		tt := newTimetable(log.record)
		start := time.Now()
		tt.add("late", cron.Every(time.Hour))
		tt.start()
		time.Sleep(time.Minute)
		tt.add("soon", cron.Every(2*time.Minute))
		time.Sleep(4*time.Minute + time.Second)
		tt.stop()
		synctest.Wait()
		want := []time.Time{start.Add(3 * time.Minute), start.Add(5 * time.Minute)}
		if got := log.of("soon"); !slices.EqualFunc(got, want, time.Time.Equal) {
			t.Errorf("soon ran at %v, want %v", offsets(got, start), offsets(want, start))
		}
	})
}

// TestTimetableStartsNothingAfterStop: once stop has returned, no job
// starts, even one that was due.
func TestTimetableStartsNothingAfterStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log runLog
		tt := newTimetable(log.record)
		tt.add("a", cron.Every(time.Minute))
		tt.start()
		time.Sleep(90 * time.Second)
		tt.stop()
		n := len(log.of("a"))
		time.Sleep(time.Hour)
		synctest.Wait()
		if got := len(log.of("a")); got != n || n != 1 {
			t.Errorf("ran %d times before stop and %d in all, want 1 and 1", n, got)
		}
		tt.stop() // twice is harmless
	})
}

// TestTimetableRunsAsRobfigCron: the daemon's spread schedules give the
// same runs under the timetable as under robfig/cron's own scheduler,
// which the daemon used before: same ids, same times, over two days.
func TestTimetableRunsAsRobfigCron(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewCadence(hourly(t), time.Now())
		var ours, theirs runLog
		tt := newTimetable(ours.record)
		cr := cron.New(cron.WithLocation(time.Local))
		ids := make([]string, 30)
		for i := range ids {
			ids[i] = fmt.Sprintf("feed-%02d", i)
			a, b := newSpreadSchedule(c, ids[i], 7), newSpreadSchedule(c, ids[i], 7)
			if i%3 == 0 { // some catch up at start
				soon := time.Now().Add(time.Duration(i) * time.Second)
				a.runSoon(soon)
				b.runSoon(soon)
			}
			tt.add(ids[i], a)
			id := ids[i]
			cr.Schedule(b, cron.FuncJob(func() { theirs.record(id) }))
		}
		tt.start()
		cr.Start()
		time.Sleep(48 * time.Hour)
		tt.stop()
		<-cr.Stop().Done()
		synctest.Wait()
		for _, id := range ids {
			a, b := ours.of(id), theirs.of(id)
			if len(a) < 40 || !slices.EqualFunc(a, b, time.Time.Equal) {
				t.Errorf("%s: timetable ran %d times, robfig/cron %d; first differences: %v", id, len(a), len(b), firstDiff(a, b))
			}
		}
	})
}

func firstDiff(a, b []time.Time) string {
	for i := range min(len(a), len(b)) {
		if !a[i].Equal(b[i]) {
			return fmt.Sprintf("run %d at %v vs %v", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(a), len(b))
}

// BenchmarkTimetable is the scheduler's cost per run and per next-run
// lookup at 1,000 to 100,000 subscriptions (hourly, spread over the hour):
// the timetable's, and robfig/cron's Entry lookup, which copies every
// entry and is what Daemon.NextRun cost before (after every run, and once
// per subscription in every /status).
//
// Run: go test ./internal/subscription -run '^$' -bench Timetable
func BenchmarkTimetable(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		c := NewCadence(hourlyB(b), time.Now())
		b.Run(fmt.Sprintf("subs=%d/run", n), func(b *testing.B) {
			tt := newTimetable(func(string) {})
			for i := range n {
				tt.add(fmt.Sprintf("s%06d", i), newSpreadSchedule(c, fmt.Sprintf("s%06d", i), 1))
			}
			ran := 0
			for b.Loop() {
				// The earliest run is due: take it (and any due with it)
				// and put it back at its next time.
				ids, _, _ := tt.takeDue(tt.due[0].next)
				ran += len(ids)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(ran, 1)), "ns/run")
		})
		b.Run(fmt.Sprintf("subs=%d/next", n), func(b *testing.B) {
			tt := newTimetable(func(string) {})
			for i := range n {
				tt.add(fmt.Sprintf("s%06d", i), newSpreadSchedule(c, fmt.Sprintf("s%06d", i), 1))
			}
			i := 0
			for b.Loop() {
				tt.next(fmt.Sprintf("s%06d", i%n))
				i++
			}
		})
		b.Run(fmt.Sprintf("subs=%d/next-robfig", n), func(b *testing.B) {
			cr := cron.New()
			ids := make([]cron.EntryID, n)
			for i := range n {
				ids[i] = cr.Schedule(newSpreadSchedule(c, fmt.Sprintf("s%06d", i), 1), cron.FuncJob(func() {}))
			}
			cr.Start()
			defer cr.Stop()
			i := 0
			for b.Loop() {
				cr.Entry(ids[i%n])
				i++
			}
		})
	}
}

func hourlyB(b *testing.B) cron.Schedule {
	s, err := cron.ParseStandard("@hourly")
	if err != nil {
		b.Fatal(err)
	}
	return s
}
