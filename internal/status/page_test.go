package status_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/store"
)

// interleaved is n subscriptions s0000, s0001, …: every third only in the
// database (removed from the configuration), every third only configured
// (never run), the others both; those in the database have a run, and
// every seventh of them is in ERROR.
func interleaved(t testing.TB, n int) (*store.Store, *config.Config, []string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite", filepath.Join(t.TempDir(), "calsyncd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	st.Now = func() time.Time { return t0 }
	cfg := config.Default()
	var ids []string
	for i := range n {
		id := fmt.Sprintf("s%04d", i)
		ids = append(ids, id)
		if i%3 != 0 {
			cfg.Subscriptions = append(cfg.Subscriptions, config.Subscription{ID: id, URL: "https://feeds.example.com/" + id + ".ics", Calendar: id + "@group.calendar.google.com"})
		}
		if i%3 == 2 {
			continue
		}
		s, err := st.EnsureSubscription(ctx, id, id+"@group.calendar.google.com", "default")
		if err != nil {
			t.Fatal(err)
		}
		if i%7 == 0 {
			s.State = calsyncd.StateError
			if err := st.SaveSubscription(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		run, err := st.StartRun(ctx, id, t0.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.FinishRun(ctx, calsyncd.Run{ID: run, FinishedAt: t0.Add(-time.Hour + time.Minute), Outcome: calsyncd.OutcomeOK, Created: i}); err != nil {
			t.Fatal(err)
		}
	}
	// The configuration lists its subscriptions in no particular order.
	slices.Reverse(cfg.Subscriptions)
	return st, cfg, ids
}

func pageServer(t *testing.T, src status.Source, cfg *config.Config) *httptest.Server {
	t.Helper()
	srv := status.NewServer(status.ServerOptions{Source: src, Config: func() *config.Config { return cfg },
		Metrics: status.NewMetrics(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return t0 }})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func getReport(t *testing.T, base string, q url.Values) status.Report {
	t.Helper()
	code, body := do(t, "GET", base+"/status?"+q.Encode(), "")
	if code != 200 {
		t.Fatalf("GET /status?%s: %d %s", q.Encode(), code, body)
	}
	var rep status.Report
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// Walking the pages forward by next_after, then back by prev_before,
// visits every subscription exactly once, in order of id, whether it is
// configured, in the database, or both; every page counts them all.
func TestStatusPagesWalk(t *testing.T) {
	st, cfg, ids := interleaved(t, 61)
	ts := pageServer(t, st, cfg)
	errors := 0
	for i := range ids {
		if i%3 != 2 && i%7 == 0 {
			errors++
		}
	}
	for _, limit := range []int{1, 7, 61, 1000} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			var forward, backward []string
			q := url.Values{"limit": {fmt.Sprint(limit)}}
			var last status.Report
			for pages := 0; ; pages++ {
				if pages > len(ids) {
					t.Fatal("the walk does not end")
				}
				rep := getReport(t, ts.URL, q)
				if rep.Total != len(ids) || rep.States[calsyncd.StateError] != errors || rep.States[calsyncd.StateActive] != len(ids)-errors ||
					rep.Failing != errors || rep.Limit != limit {
					t.Fatalf("page %d counts: total %d states %v failing %d limit %d; want %d, %d in ERROR, limit %d",
						pages, rep.Total, rep.States, rep.Failing, rep.Limit, len(ids), errors, limit)
				}
				if len(rep.Subscriptions) > limit || len(rep.Subscriptions) == 0 {
					t.Fatalf("page %d holds %d subscriptions (limit %d)", pages, len(rep.Subscriptions), limit)
				}
				if (pages == 0) != (rep.PrevBefore == "") {
					t.Errorf("page %d: prev_before %q", pages, rep.PrevBefore)
				}
				for _, s := range rep.Subscriptions {
					i := slices.Index(ids, s.ID)
					if s.InConfig != (i%3 != 0) || (i%3 == 2) != (s.LastRun == nil) {
						t.Errorf("%s: in_config %v, last run %v", s.ID, s.InConfig, s.LastRun)
					}
					if i%3 == 1 && (s.LastRun.Created != i || s.Calendar != s.ID+"@group.calendar.google.com") {
						t.Errorf("%s: its own run and calendar? %+v", s.ID, s)
					}
					forward = append(forward, s.ID)
				}
				last = rep
				if rep.NextAfter == "" {
					break
				}
				q = url.Values{"limit": {fmt.Sprint(limit)}, "after": {rep.NextAfter}}
			}
			if !slices.Equal(forward, ids) {
				t.Fatalf("forward walk:\n%v\nwant\n%v", forward, ids)
			}
			rep := last
			for {
				page := []string{}
				for _, s := range rep.Subscriptions {
					page = append(page, s.ID)
				}
				backward = append(page, backward...)
				if rep.PrevBefore == "" {
					break
				}
				rep = getReport(t, ts.URL, url.Values{"limit": {fmt.Sprint(limit)}, "before": {rep.PrevBefore}})
				if len(rep.Subscriptions) != min(limit, len(ids)) {
					t.Errorf("a page before %v holds %d", rep.PrevBefore, len(rep.Subscriptions))
				}
				if rep.NextAfter == "" {
					t.Errorf("a page read backwards has no next page")
				}
			}
			if !slices.Equal(backward, ids) {
				t.Fatalf("backward walk:\n%v\nwant\n%v", backward, ids)
			}
		})
	}
	// Without a limit, a page holds 100; after an id no longer known, the
	// page starts at the next one.
	if rep := getReport(t, ts.URL, url.Values{"after": {"s0009x"}, "limit": {"2"}}); len(rep.Subscriptions) != 2 || rep.Subscriptions[0].ID != "s0010" {
		t.Errorf("after s0009x: %+v", rep.Subscriptions)
	}
	if rep := getReport(t, ts.URL, nil); rep.Limit != status.DefaultPageLimit || len(rep.Subscriptions) != len(ids) {
		t.Errorf("default page: limit %d, %d subscriptions", rep.Limit, len(rep.Subscriptions))
	}
}

// A limit that is not a whole number from 1 to 1000 is refused with a
// message saying so, by /status and by the page.
func TestStatusPageLimits(t *testing.T) {
	st, cfg, _ := interleaved(t, 5)
	ts := pageServer(t, st, cfg)
	for _, tt := range []struct {
		query string
		code  int
		want  string
	}{
		{"limit=1", 200, ""},
		{"limit=1000", 200, ""},
		{"after=s0001", 200, ""},
		{"before=s0003", 200, ""},
		{"limit=0", 400, "limit must be a whole number from 1 to 1000"},
		{"limit=-3", 400, "limit must be a whole number from 1 to 1000"},
		{"limit=1001", 400, "limit must be a whole number from 1 to 1000"},
		{"limit=ten", 400, "ten"},
		{"limit=", 400, "limit must be a whole number from 1 to 1000"},
		{"limit=2.5", 400, "limit must be a whole number from 1 to 1000"},
		{"after=s0001&before=s0003", 400, "not both"},
	} {
		for _, path := range []string{"/status", "/"} {
			code, body := do(t, "GET", ts.URL+path+"?"+tt.query, "")
			if code != tt.code || !strings.Contains(body, tt.want) {
				t.Errorf("GET %s?%s: %d %.200s; want %d %q", path, tt.query, code, body, tt.code, tt.want)
			}
		}
	}
}

// The page shows the totals of every subscription and links the pages
// before and after it.
func TestStatusPageLinksPages(t *testing.T) {
	st, cfg, _ := interleaved(t, 12)
	ts := pageServer(t, st, cfg)
	_, body := do(t, "GET", ts.URL+"/?limit=3&after=s0002", "")
	for _, want := range []string{
		`12 subscriptions · 10 ACTIVE · 2 ERROR · 2 in trouble · this page shows 3, by id`,
		`href="/?before=s0003&amp;limit=3" rel="prev"`,
		`href="/?after=s0005&amp;limit=3" rel="next"`,
		`id="sub-s0003"`, `id="sub-s0005"`,
		`2 subscriptions in trouble`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	for _, not := range []string{`id="sub-s0002"`, `id="sub-s0006"`} {
		if strings.Contains(body, not) {
			t.Errorf("the page shows %s, not on it", not)
		}
	}
	if _, body := do(t, "GET", ts.URL+"/", ""); strings.Contains(body, `rel="next"`) || strings.Contains(body, `rel="prev"`) {
		t.Errorf("a page of every subscription links others")
	}
}

// countingSource counts the calls to the state database.
type countingSource struct {
	status.Source
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingSource) count(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[name]++
}

func (c *countingSource) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.calls {
		n += v
	}
	return n
}

func (c *countingSource) Subscriptions(ctx context.Context) ([]calsyncd.SubscriptionState, error) {
	c.count("Subscriptions")
	return c.Source.Subscriptions(ctx)
}
func (c *countingSource) Runs(ctx context.Context, id string, n int) ([]calsyncd.Run, error) {
	c.count("Runs")
	return c.Source.Runs(ctx, id, n)
}
func (c *countingSource) RunChanges(ctx context.Context, run int64) ([]calsyncd.RunChange, error) {
	c.count("RunChanges")
	return c.Source.RunChanges(ctx, run)
}
func (c *countingSource) Accounts(ctx context.Context) ([]calsyncd.AccountState, error) {
	c.count("Accounts")
	return c.Source.Accounts(ctx)
}
func (c *countingSource) Leases(ctx context.Context) ([]calsyncd.Lease, error) {
	c.count("Leases")
	return c.Source.Leases(ctx)
}
func (c *countingSource) AlertStates(ctx context.Context) ([]calsyncd.AlertState, error) {
	c.count("AlertStates")
	return c.Source.AlertStates(ctx)
}
func (c *countingSource) Ping(ctx context.Context) error {
	c.count("Ping")
	return c.Source.Ping(ctx)
}
func (c *countingSource) SubscriptionIDs(ctx context.Context) ([]string, error) {
	c.count("SubscriptionIDs")
	return c.Source.SubscriptionIDs(ctx)
}
func (c *countingSource) SubscriptionsAfter(ctx context.Context, after string, n int) ([]calsyncd.SubscriptionState, error) {
	c.count("SubscriptionsAfter")
	return c.Source.SubscriptionsAfter(ctx, after, n)
}
func (c *countingSource) SubscriptionsBefore(ctx context.Context, before string, n int) ([]calsyncd.SubscriptionState, error) {
	c.count("SubscriptionsBefore")
	return c.Source.SubscriptionsBefore(ctx, before, n)
}
func (c *countingSource) SubscriptionCounts(ctx context.Context) (calsyncd.SubscriptionCounts, error) {
	c.count("SubscriptionCounts")
	return c.Source.SubscriptionCounts(ctx)
}
func (c *countingSource) MappingCounts(ctx context.Context, ids []string) (map[string]int, error) {
	c.count("MappingCounts")
	return c.Source.MappingCounts(ctx, ids)
}
func (c *countingSource) RejectionsOf(ctx context.Context, ids []string) (map[string][]calsyncd.Rejection, error) {
	c.count("RejectionsOf")
	return c.Source.RejectionsOf(ctx, ids)
}
func (c *countingSource) RecentRuns(ctx context.Context, ids []string, n int) (map[string][]calsyncd.Run, error) {
	c.count("RecentRuns")
	return c.Source.RecentRuns(ctx, ids, n)
}

// A page of the status costs the same calls to the database with 100
// subscriptions as with 10,000: first, middle and last pages, forward and
// backward, the JSON and the page, and one subscription's page.
func TestStatusQueriesDoNotGrowWithSubscriptions(t *testing.T) {
	requests := []string{"/status", "/status?limit=1000", "/status?after=s0049&limit=20", "/status?before=s0050&limit=20",
		"/?after=s0010", "/?limit=1000&before=s0099", "/subscriptions/s0031"}
	calls := map[int][]int{}
	for _, n := range []int{100, 10_000} {
		st, cfg, _ := interleaved(t, n)
		src := &countingSource{Source: st, calls: map[string]int{}}
		ts := pageServer(t, src, cfg)
		for _, path := range requests {
			before := src.total()
			if code, body := do(t, "GET", ts.URL+path, ""); code != 200 {
				t.Fatalf("n=%d GET %s: %d %s", n, path, code, body)
			}
			calls[n] = append(calls[n], src.total()-before)
		}
		t.Logf("n=%d: calls per request %v (%v in all)", n, calls[n], src.calls)
	}
	if !slices.Equal(calls[100], calls[10_000]) {
		t.Errorf("calls per request for %v:\n100 subscriptions:    %v\n10,000 subscriptions: %v", requests, calls[100], calls[10_000])
	}
	for i, c := range calls[100] {
		// A subscription's page reads, besides, the changes of each of
		// its last 20 runs.
		if c > 10 && !strings.HasPrefix(requests[i], "/subscriptions/") {
			t.Errorf("GET %s: %d calls to the database", requests[i], c)
		}
	}
}
