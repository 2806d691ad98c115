package status_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/store"
)

// BenchmarkStatusAtScale serves the status of 1,000, 10,000 and 100,000
// subscriptions from a SQLite store (one database, grown between the
// sub-benchmarks; each subscription has a run, one in a hundred mappings
// and a rejection, one in a thousand is in ERROR) and reports the first
// page of GET /status, a page in the middle, walking every page at
// limit=1000, and a scrape of /metrics (after a run of each
// subscription was counted) with its size.
//
// Run: go test ./internal/status -run '^$' -bench StatusAtScale -benchtime 1x
func BenchmarkStatusAtScale(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite", filepath.Join(b.TempDir(), "calsyncd.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	st.Now = func() time.Time { return t0 }
	cfg := config.Default()
	seeded := 0
	for _, n := range []int{1_000, 10_000, 100_000} {
		start := time.Now()
		for ; seeded < n; seeded++ {
			seedSubscription(b, st, cfg, seeded)
		}
		b.Logf("seeding to %d subscriptions took %s", n, time.Since(start).Round(time.Millisecond))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m := status.NewMetrics()
			m.WatchSubscriptions(st, func() []string { return ids(cfg) })
			for _, s := range cfg.Subscriptions {
				m.RunFinished(s.ID, calsyncd.OutcomeOK, calsyncd.StateActive, time.Second)
			}
			srv := status.NewServer(status.ServerOptions{Source: st, Config: func() *config.Config { return cfg }, Metrics: m,
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return t0 }})
			h := srv.Handler()
			get := func(path string) ([]byte, time.Duration) {
				start := time.Now()
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+path, nil)
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String())
				}
				return rec.Body.Bytes(), time.Since(start)
			}
			var first, middle, walk, scrape time.Duration
			var scraped, pages int
			for b.Loop() {
				_, d := get("/status")
				first += d
				_, d = get("/status?" + url.Values{"after": {fmt.Sprintf("s%06d", n/2)}}.Encode())
				middle += d
				start, after := time.Now(), ""
				for pages = 1; ; pages++ {
					body, _ := get("/status?" + url.Values{"limit": {"1000"}, "after": {after}}.Encode())
					var rep struct {
						NextAfter string `json:"next_after"`
					}
					if err := json.Unmarshal(body, &rep); err != nil {
						b.Fatal(err)
					}
					if after = rep.NextAfter; after == "" {
						break
					}
				}
				walk += time.Since(start)
				body, d := get("/metrics")
				scrape += d
				scraped = len(body)
			}
			k := float64(b.N)
			b.ReportMetric(float64(first.Milliseconds())/k, "first-page-ms")
			b.ReportMetric(float64(middle.Milliseconds())/k, "middle-page-ms")
			b.ReportMetric(walk.Seconds()/k, "walk-all-s")
			b.ReportMetric(float64(pages), "pages-of-1000")
			b.ReportMetric(float64(scrape.Milliseconds())/k, "metrics-ms")
			b.ReportMetric(float64(scraped), "metrics-bytes")
		})
	}
}

func ids(cfg *config.Config) []string {
	out := make([]string, len(cfg.Subscriptions))
	for i, s := range cfg.Subscriptions {
		out[i] = s.ID
	}
	return out
}

// seedSubscription adds subscription i to the configuration and the
// store, with a finished run.
func seedSubscription(b *testing.B, st *store.Store, cfg *config.Config, i int) {
	ctx := context.Background()
	id := fmt.Sprintf("s%06d", i)
	cal := id + "@group.calendar.google.com"
	cfg.Subscriptions = append(cfg.Subscriptions, config.Subscription{ID: id, URL: "https://feeds.example.com/" + id + ".ics", Calendar: cal})
	s, err := st.EnsureSubscription(ctx, id, cal, "default")
	if err != nil {
		b.Fatal(err)
	}
	if i%1000 == 7 {
		s.State, s.LastErrorClass, s.LastError = calsyncd.StateError, calsyncd.ClassFeedRejected, "feed: 404 Not Found"
		if err := st.SaveSubscription(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	run, err := st.StartRun(ctx, id, t0.Add(-time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	if err := st.FinishRun(ctx, calsyncd.Run{ID: run, FinishedAt: t0.Add(-time.Hour + time.Minute), Outcome: calsyncd.OutcomeOK, Unchanged: 20}); err != nil {
		b.Fatal(err)
	}
	if i%100 == 3 {
		var changes []calsyncd.Change
		for e := range 20 {
			changes = append(changes, calsyncd.MappingSaved(calsyncd.Mapping{Key: calsyncd.Key{UID: fmt.Sprint(e)}, EventID: fmt.Sprint("e", e), Hash: "h"}))
		}
		changes = append(changes, calsyncd.RejectionSaved(calsyncd.Rejection{Key: calsyncd.Key{UID: "bad"}, Hash: "h", Reason: "HTTP 400"}))
		if err := st.Record(ctx, id, changes...); err != nil {
			b.Fatal(err)
		}
	}
}
