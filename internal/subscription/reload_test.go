package subscription_test

import (
	"context"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/render"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

const twoEvents = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\n" +
	"BEGIN:VEVENT\r\nUID:a@example.com\r\nDTSTART:20270111T090000Z\r\nDTEND:20270111T100000Z\r\nSUMMARY:A\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:b@example.com\r\nDTSTART:20270112T090000Z\r\nDTEND:20270112T100000Z\r\nSUMMARY:B\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

// opsWriter accepts every write and counts the ops it was given, by kind.
type opsWriter struct {
	okWriter
	mu     sync.Mutex
	byKind map[diff.Kind]int
}

func (w *opsWriter) Apply(ctx context.Context, b diff.Batch, p calsyncd.Persister) calsyncd.WriteResult {
	w.mu.Lock()
	if w.byKind == nil {
		w.byKind = map[diff.Kind]int{}
	}
	for _, op := range b.Ops {
		w.byKind[op.Kind]++
	}
	w.mu.Unlock()
	return w.okWriter.Apply(ctx, b, p)
}

func (w *opsWriter) count(k diff.Kind) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byKind[k]
}

// took is how many updates were asked for since the last call.
func (w *opsWriter) took() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.byKind[diff.Update]
	delete(w.byKind, diff.Update)
	return n
}

// TestReloadAppliesEveryKey: after a reload that changes one key of a
// subscription, its next run uses it — presentation keys re-render (an
// update of every event), a filter's deletes are held, a limit refuses
// the feed (the log said changed=[] and the runs
// stayed not_modified with the old rendering until a restart).
func TestReloadAppliesEveryKey(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := map[string]struct {
		// from is the subscription before the reload (sub("good") when nil).
		from   func(*config.Subscription)
		change func(*config.Subscription)
		// wantUpdates: the run re-renders both events; check the run.
		wantUpdates int
		check       func(calsyncd.Run) bool
	}{
		"title":        {change: func(c *config.Subscription) { c.Title = s("[X] {summary}") }, wantUpdates: 2},
		"color":        {change: func(c *config.Subscription) { c.Color = s("11") }, wantUpdates: 2},
		"privacy":      {change: func(c *config.Subscription) { c.Privacy = s("busy") }, wantUpdates: 2},
		"visibility":   {change: func(c *config.Subscription) { c.Visibility = s("private") }, wantUpdates: 2},
		"transparency": {change: func(c *config.Subscription) { c.Transparency = s("free") }, wantUpdates: 2},
		"reminders": {change: func(c *config.Subscription) {
			c.Reminders = &config.Reminders{Timed: &config.ReminderSetting{Mode: render.ReminderNone}}
		}, wantUpdates: 2},
		"filters": {change: func(c *config.Subscription) {
			c.Filters = []config.Filter{filter(true, "summary", "^B$")}
		}, check: func(r calsyncd.Run) bool { return r.Filtered == 1 }},
		// A limit that refused the feed, raised: the next run mirrors it.
		"limits": {from: func(c *config.Subscription) { c.Limits = &config.Limits{MaxEvents: 1} },
			change: func(c *config.Subscription) { c.Limits = &config.Limits{MaxEvents: 2} },
			check:  func(r calsyncd.Run) bool { return r.Outcome == calsyncd.OutcomeOK && r.Created == 2 }},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &opsWriter{}
				from := sub("good")
				if tt.from != nil {
					tt.from(&from)
				}
				d, f, st := newDaemonWith(t, w, nil, io.Discard, from)
				f.bodies["https://example.com/good.ics"] = twoEvents
				ctx := context.Background()
				if err := d.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer d.Shutdown(ctx)
				time.Sleep(10 * time.Minute) // the catch-up run mirrors the feed
				if n, _ := st.CountMappings(ctx, "good"); n != 2 && tt.from == nil {
					t.Fatalf("mapped %d after the first run", n)
				}
				w.took()
				cfg := config.Default()
				cfg.StateDir = t.TempDir()
				changed := from
				tt.change(&changed)
				cfg.Subscriptions = []config.Subscription{changed}
				if err := d.Reload(ctx, cfg); err != nil {
					t.Fatal(err)
				}
				if _, err := d.Trigger("good", subscription.Options{}); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				runs, err := st.Runs(ctx, "good", 1)
				if err != nil || len(runs) != 1 {
					t.Fatalf("runs: %v %v", runs, err)
				}
				if got := w.took(); got != tt.wantUpdates {
					t.Errorf("the run after the reload updated %d events, want %d (%s)", got, tt.wantUpdates, runs[0].Outcome)
				}
				if tt.check != nil && !tt.check(runs[0]) {
					t.Errorf("the run after the reload: %+v", runs[0])
				}
			})
		})
	}
}
