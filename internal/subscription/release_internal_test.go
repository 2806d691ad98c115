package subscription

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/render"
)

// nothingStored is a Store that takes every record and queues nothing.
type nothingStored struct{ Store }

func (nothingStored) Record(context.Context, string, ...calsyncd.Change) error { return nil }
func (nothingStored) Queue(string, ...calsyncd.Change) error                   { return nil }
func (nothingStored) Flush(context.Context, string) error                      { return nil }

// feedReachable is a Writer that, as the writes begin, says whether the
// feed's parsed events can still be reached (a weak pointer to them
// survives a collection) other than as the events written (a feed of
// single events is shaped in its own storage: held once), and takes
// every write.
type feedReachable struct {
	Writer
	events    weak.Pointer[feed.Event]
	reachable bool
	writes    int
}

func (w *feedReachable) Unsupported(*feed.Event) string { return "" }

func (w *feedReachable) Apply(_ context.Context, b diff.Batch, _ calsyncd.Persister) calsyncd.WriteResult {
	runtime.GC()
	first := w.events.Value()
	w.reachable, w.writes = first != nil, len(b.Ops)
	for _, op := range b.Ops {
		if first != nil && op.Event == first {
			// The shape is the feed's own storage, not a second copy.
			w.reachable = false
		}
	}
	return calsyncd.WriteResult{Created: len(b.Ops)}
}

// releaseFeed: by the time the writes begin, the pass holds the feed's
// events once (shaped, in their own storage when they are all single
// events), not twice, unless Google may refuse a series and
// a second round must shape the feed again: singles are let go after
// shape, a series the plan writes is kept, a series unchanged since the
// last run (nothing of it written) is let go before the writes. The
// feed's size reaches the guard either way, and a rejection of an event
// still in the feed is not forgotten.
func TestTheFeedIsLetGoBeforeTheWrites(t *testing.T) {
	single := "BEGIN:VEVENT\r\nUID:single-%d\r\nDTSTART:20270301T0%d0000Z\r\nSUMMARY:Single\r\nEND:VEVENT\r\n"
	series := "BEGIN:VEVENT\r\nUID:series\r\nDTSTART:20270301T120000Z\r\nRRULE:FREQ=WEEKLY;COUNT=5\r\nSUMMARY:Series\r\nEND:VEVENT\r\n"
	for _, tt := range []struct {
		name          string
		series        bool
		seriesMapped  bool // the series is mapped, unchanged: not written
		wantReachable bool
	}{
		{"singles only", false, false, false},
		{"a series written", true, false, true},
		{"a series unchanged", true, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n")
			for i := range 3 {
				fmt.Fprintf(&b, single, i, i)
			}
			if tt.series {
				b.WriteString(series)
			}
			b.WriteString("END:VCALENDAR\r\n")
			now := time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)
			cal, err := feed.ParseBytes([]byte(b.String()), feed.Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			w := &feedReachable{events: weak.Make(&cal.Events[0])}
			cfg := config.Default()
			sub := config.Subscription{ID: "team", Calendar: "team@example.com"}
			meta := *cal
			meta.Events = nil
			p := pass{begun: begun{sub: sub, cfg: cfg, log: slog.New(slog.DiscardHandler)}, account: accounted{writer: w},
				parsed: parsed{now: now, cal: &meta}, rendered: rendered{Result: render.Result{Events: cal.Events}, count: len(cal.Events)}}
			// A rejection of an event the feed still has.
			p.loaded.known.rejections = []calsyncd.Rejection{{Key: calsyncd.Key{UID: "single-1"}, Reason: "refused"}}
			if tt.seriesMapped {
				for i := range cal.Events {
					if ev := &cal.Events[i]; ev.IsRecurring() {
						p.loaded.known.mappings = []calsyncd.Mapping{{Key: ev.Key(), EventID: "s", Hash: ev.ComputeHash()}}
					}
				}
			}
			wantEvents := len(cal.Events)
			cal = nil
			r := &Runner{Store: nothingStored{}}
			p = r.write(context.Background(), p)
			if p.over() {
				t.Fatalf("the pass stopped: %v", p.end.err)
			}
			if w.writes == 0 {
				t.Fatal("nothing was written: the test proved nothing")
			}
			if w.reachable != tt.wantReachable {
				t.Errorf("the feed's events reachable during the writes: %v, want %v", w.reachable, tt.wantReachable)
			}
			if p.rendered.count != wantEvents {
				t.Errorf("the guard was told of %d feed events, want %d", p.rendered.count, wantEvents)
			}
			if k := p.known(); len(k.rejections) != 1 {
				t.Errorf("rejections after the run: %v, want the one of the event still in the feed", k.rejections)
			}
		})
	}
}
