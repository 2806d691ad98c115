package subscription_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/store"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// benchFeed is an ICS feed of n timed events whose UIDs carry gen: a feed
// that mints new UIDs on every fetch gives a new gen each time.
func benchFeed(n, gen int) []byte {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calsyncd bench//EN\r\n")
	start := time.Date(2027, 3, 1, 8, 0, 0, 0, time.UTC)
	for i := range n {
		s := start.Add(time.Duration(i) * 3 * time.Hour)
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:g%d-e%05d@example.com\r\nDTSTAMP:20261129T000000Z\r\nDTSTART:%s\r\nDTEND:%s\r\nSUMMARY:Event %d\r\nEND:VEVENT\r\n",
			gen, i, s.Format("20060102T150405Z"), s.Add(time.Hour).Format("20060102T150405Z"), i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	return []byte(b.String())
}

// meteredStore counts what a pass asks of the store.
type meteredStore struct {
	subscription.Store
	mappingReads, writes atomic.Int64
}

func (s *meteredStore) Mappings(ctx context.Context, id string) ([]calsyncd.Mapping, error) {
	s.mappingReads.Add(1)
	return s.Store.Mappings(ctx, id)
}

func (s *meteredStore) Record(ctx context.Context, id string, changes ...calsyncd.Change) error {
	s.writes.Add(int64(len(changes)))
	return s.Store.Record(ctx, id, changes...)
}

func (s *meteredStore) Queue(id string, changes ...calsyncd.Change) error {
	s.writes.Add(int64(len(changes)))
	return s.Store.Queue(id, changes...)
}

// passBench is a subscription of n events mirrored into the emulator, with
// a feed server that answers If-None-Match.
type passBench struct {
	runner *subscription.Runner
	sub    config.Subscription
	store  *store.Store
	meter  *meteredStore
	// commits is the store's count when the measured passes began;
	// requests the emulator's.
	commits  int64
	fake     *gcalfake.Server
	requests int
	// clock is the writer's: an hour passes between passes, as between a
	// subscription's runs, so no pass shares another's credential check.
	clock *stepClock

	mu   sync.Mutex
	body []byte
	etag string
}

func newPassBench(b *testing.B, n int) *passBench {
	b.Helper()
	pb := &passBench{body: benchFeed(n, 0), etag: `"g0"`}
	feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pb.mu.Lock()
		body, etag := pb.body, pb.etag
		pb.mu.Unlock()
		if etag != "" && r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if etag != "" {
			w.Header().Set("ETag", etag)
		}
		w.Write(body)
	}))
	b.Cleanup(feeds.Close)
	dir := b.TempDir()
	st, err := store.Open(context.Background(), "sqlite", filepath.Join(dir, "calsyncd.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	fake := gcalfake.New(gcalfake.Options{Seed: 1})
	fake.AddCalendar(testCalendar, "UTC")
	svc, err := calendar.NewService(context.Background(), option.WithEndpoint(gcalfake.Endpoint), option.WithHTTPClient(fake.Client("team")))
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pb.fake, pb.clock = fake, &stepClock{}
	w := gcalwriter.New(svc, gcalwriter.Options{Logger: log, Spacing: time.Microsecond, Clock: pb.clock})
	cfg := config.Default()
	cfg.StateDir = dir
	cfg.Window = config.Window{}
	pb.sub = config.Subscription{ID: "team", URL: feeds.URL + "/team.ics", Calendar: testCalendar}
	cfg.Subscriptions = []config.Subscription{pb.sub}
	pb.store, pb.meter = st, &meteredStore{Store: st}
	pb.runner = &subscription.Runner{Config: cfg, Store: pb.meter, Fetcher: fetch.NewFetcher(0, 0, 20<<20, feed.CheckBody),
		Writer: func(string) (subscription.Writer, error) { return w, nil }, Log: log,
		Now: func() time.Time { return time.Date(2027, 1, 11, 9, 0, 0, 0, time.UTC) }}
	if rep := pb.sync(b); rep.Run.Created != n {
		b.Fatalf("first sync: %+v (%v)", rep.Run, rep.Err)
	}
	return pb
}

func (pb *passBench) sync(b *testing.B) subscription.Report {
	b.Helper()
	pb.clock.advance(time.Hour)
	rep, err := pb.runner.Sync(context.Background(), pb.sub, subscription.Options{})
	if err != nil || rep.Run.Outcome == calsyncd.OutcomeFailed {
		b.Fatalf("sync: %v %v", err, rep.Err)
	}
	return rep
}

func (pb *passBench) setFeed(body []byte, etag string) {
	pb.mu.Lock()
	defer pb.mu.Unlock()
	pb.body, pb.etag = body, etag
}

// BenchmarkPass is one pass of a subscription of 2,000 events already in
// Google, when
//
//   - rekey: the feed minted new UIDs for every event (content unchanged:
//     no write to Google, every mapping moves to its new key);
//   - not-modified: the feed server answers 304;
//   - same-body: it answers the same body without validators (the body
//     hash says not modified);
//   - reconcile: sync --reconcile of the unchanged feed (the owned events
//     listed and compared, content drift included; nothing to repair).
//
// It reports ns/op, google-requests/pass (what the pass asked of the
// emulator, passes an hour apart), mapping-reads/pass (the store's Mappings calls),
// store-writes/pass (mapping and rejection changes asked of the store) and
// commits/pass (write transactions: disk flushes under synchronous=FULL,
// WAL appends under NORMAL).
//
// Run: go test ./internal/subscription -run '^$' -bench BenchmarkPass -benchtime 20x
func BenchmarkPass(b *testing.B) {
	const n = 2000
	b.Run("rekey", func(b *testing.B) {
		pb := newPassBench(b, n)
		gen := 0
		pb.reset()
		passes := 0
		for b.Loop() {
			b.StopTimer()
			gen++
			pb.setFeed(benchFeed(n, gen), "")
			b.StartTimer()
			if rep := pb.sync(b); rep.Run.Unchanged != n || rep.Run.Created+rep.Run.Deleted != 0 {
				b.Fatalf("rekey pass: %+v", rep.Run)
			}
			passes++
		}
		pb.report(b, passes)
	})
	// reconcile: a reconcile of the unchanged feed (sync --reconcile):
	// the owned events listed, compared with the mappings and, for
	// content drift, with the feed; nothing to repair.
	b.Run("reconcile", func(b *testing.B) {
		pb := newPassBench(b, n)
		pb.reset()
		passes := 0
		for b.Loop() {
			pb.clock.advance(time.Hour)
			rep, err := pb.runner.Sync(context.Background(), pb.sub, subscription.Options{Reconcile: true})
			if err != nil || rep.Run.Outcome != calsyncd.OutcomeOK || rep.Run.Unchanged != n || rep.Run.Updated != 0 {
				b.Fatalf("reconcile pass: %+v (%v %v)", rep.Run, err, rep.Err)
			}
			passes++
		}
		pb.report(b, passes)
	})
	for _, mode := range []string{"not-modified", "same-body"} {
		b.Run(mode, func(b *testing.B) {
			pb := newPassBench(b, n)
			if mode == "same-body" {
				pb.setFeed(benchFeed(n, 0), "")
			}
			pb.sync(b) // the validators of a complete run
			pb.reset()
			passes := 0
			for b.Loop() {
				if rep := pb.sync(b); rep.Run.Outcome != calsyncd.OutcomeNotModified {
					b.Fatalf("%s pass: %+v", mode, rep.Run)
				}
				passes++
			}
			pb.report(b, passes)
		})
	}
}

func (pb *passBench) reset() {
	pb.meter.mappingReads.Store(0)
	pb.meter.writes.Store(0)
	pb.commits = pb.store.Commits()
	pb.requests = pb.fake.Stats().Requests
}

func (pb *passBench) report(b *testing.B, passes int) {
	b.ReportMetric(float64(pb.store.Commits()-pb.commits)/float64(passes), "commits/pass")
	b.ReportMetric(float64(pb.fake.Stats().Requests-pb.requests)/float64(passes), "google-requests/pass")
	b.ReportMetric(float64(pb.meter.mappingReads.Load())/float64(passes), "mapping-reads/pass")
	b.ReportMetric(float64(pb.meter.writes.Load())/float64(passes), "store-writes/pass")
}

// stepClock is the writer's clock in the benchmark: the real time, moved
// on by the benchmark between passes.
type stepClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

func (*stepClock) AfterFunc(d time.Duration, f func()) gcalwriter.Timer { return time.AfterFunc(d, f) }
