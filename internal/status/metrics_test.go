package status_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/status"
)

var metricsT0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// subscriptionGauges are the per-subscription gauges the alerting rules
// read.
var subscriptionGauges = []string{"calsyncd_subscription_state{", "calsyncd_held_deletes{", "calsyncd_last_success_timestamp_seconds{"}

// expectGauges scrapes the metrics as Prometheus does and compares the
// subscription gauges' samples, in the exposition's order.
func expectGauges(t *testing.T, m *status.Metrics, want ...string) {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	var got []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		for _, g := range subscriptionGauges {
			if strings.HasPrefix(line, g) {
				got = append(got, line)
			}
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("gauges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// unix is a time as the exposition prints a gauge holding it.
func unix(d time.Duration) string {
	return strconv.FormatFloat(float64(metricsT0.Add(d).Unix()), 'g', -1, 64)
}

type subscriptionSource struct {
	states []calsyncd.SubscriptionState
	last   map[string]time.Time
	err    error
}

func (s *subscriptionSource) Subscriptions(context.Context) ([]calsyncd.SubscriptionState, error) {
	return s.states, s.err
}

func (s *subscriptionSource) LastSuccesses(_ context.Context, ids []string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	for _, id := range ids {
		if t, ok := s.last[id]; ok {
			out[id] = t
		}
	}
	return out, nil
}

// The alerting gauges are read from the database at each scrape: right
// after a restart, the same on every replica, only for configured
// subscriptions.
func TestSubscriptionGauges(t *testing.T) {
	src := &subscriptionSource{
		states: []calsyncd.SubscriptionState{
			{ID: "broken", State: calsyncd.StateError, CreatedAt: metricsT0},
			{ID: "guarded", State: calsyncd.StateActive, HeldDeletes: 40, CreatedAt: metricsT0},
			{ID: "removed", State: calsyncd.StateError, CreatedAt: metricsT0},
		},
		last: map[string]time.Time{"guarded": metricsT0.Add(5 * time.Hour)},
	}
	configured := []string{"broken", "guarded", "new"}
	m := status.NewMetrics()
	m.WatchSubscriptions(src, func() []string { return configured })
	// "broken" never succeeded: it counts from when it was added. "new"
	// has no row yet, "removed" is not configured: no series.
	expectGauges(t, m,
		`calsyncd_held_deletes{subscription="broken"} 0`,
		`calsyncd_held_deletes{subscription="guarded"} 40`,
		`calsyncd_last_success_timestamp_seconds{subscription="broken"} `+unix(0),
		`calsyncd_last_success_timestamp_seconds{subscription="guarded"} `+unix(5*time.Hour),
		`calsyncd_subscription_state{state="ACTIVE",subscription="broken"} 0`,
		`calsyncd_subscription_state{state="ACTIVE",subscription="guarded"} 1`,
		`calsyncd_subscription_state{state="ERROR",subscription="broken"} 1`,
		`calsyncd_subscription_state{state="ERROR",subscription="guarded"} 0`)

	// The next scrape sees what runs and reloads changed.
	src.states[0].State = calsyncd.StateActive
	src.states[1].HeldDeletes = 0
	src.last["broken"] = metricsT0.Add(7 * time.Hour)
	configured = []string{"broken"}
	expectGauges(t, m,
		`calsyncd_held_deletes{subscription="broken"} 0`,
		`calsyncd_last_success_timestamp_seconds{subscription="broken"} `+unix(7*time.Hour),
		`calsyncd_subscription_state{state="ACTIVE",subscription="broken"} 1`,
		`calsyncd_subscription_state{state="ERROR",subscription="broken"} 0`)

	// A database that does not answer fails the scrape rather than
	// reporting nothing (which would resolve every alert).
	src.err = errors.New("database is down")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "database is down") {
		t.Errorf("scrape with the database down: %d %s", rec.Code, rec.Body.String())
	}
}

func TestBuildInfoIsPublished(t *testing.T) {
	m := status.NewMetrics()
	m.SetBuildInfo("0.9.0", "3f0542a", "go1.26.8")
	m.SetBuildInfo("other", "x", "y") // the first stays
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	want := `calsyncd_build_info{goversion="go1.26.8",revision="3f0542a",version="0.9.0"} 1`
	if !strings.Contains(rec.Body.String(), want) || strings.Contains(rec.Body.String(), `version="other"`) {
		t.Errorf("metrics lack %s:\n%s", want, rec.Body.String())
	}
}

// Beyond SubscriptionSeriesLimit configured subscriptions the metrics
// carry no series per subscription: the gauges are aggregates over the
// configured ones and the counters lose their subscription label. Back
// under the limit, the series per subscription return.
func TestSubscriptionSeriesLimit(t *testing.T) {
	var configured []string
	src := &subscriptionSource{last: map[string]time.Time{}}
	for i := range status.SubscriptionSeriesLimit + 1 {
		id := fmt.Sprintf("s%05d", i)
		configured = append(configured, id)
		st := calsyncd.SubscriptionState{ID: id, State: calsyncd.StateActive, CreatedAt: metricsT0}
		src.last[id] = metricsT0.Add(time.Duration(i) * time.Second)
		switch i {
		case 7, 8:
			st.State = calsyncd.StateError
		case 9:
			st.HeldDeletes = 5
		}
		src.states = append(src.states, st)
	}
	delete(src.last, "s00003")                                                                             // never succeeded: since it was added, metricsT0
	src.last["s00007"] = metricsT0.Add(-time.Hour)                                                         // in ERROR: its own alert
	src.states = append(src.states, calsyncd.SubscriptionState{ID: "removed", State: calsyncd.StateError}) // not configured
	m := status.NewMetrics()
	m.WatchSubscriptions(src, func() []string { return configured })
	m.RunFinished("s00001", calsyncd.OutcomeOK, calsyncd.StateActive, time.Second)
	m.RunFinished("s00002", calsyncd.OutcomeOK, calsyncd.StateActive, time.Second)
	m.WriteDone("s00001", "create", "ok")

	scrape := func() string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		return rec.Body.String()
	}
	body := scrape()
	for _, want := range []string{
		`calsyncd_subscriptions{state="ACTIVE"} 9999`,
		`calsyncd_subscriptions{state="ERROR"} 2`,
		`calsyncd_subscriptions_holding_deletes 1`,
		`calsyncd_oldest_last_success_timestamp_seconds ` + unix(0),
		// An empty label is no label to Prometheus: one series for all.
		`calsyncd_runs_total{outcome="ok",subscription=""} 2`,
		`calsyncd_writes_total{op="create",outcome="ok",subscription=""} 1`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("beyond the limit, the metrics lack %s", want)
		}
	}
	if strings.Contains(body, `subscription="s`) || strings.Contains(body, `subscription="removed`) {
		t.Errorf("beyond the limit, a series per subscription is exported")
	}
	if len(body) > 64<<10 {
		t.Errorf("beyond the limit, a scrape is %d bytes", len(body))
	}

	configured = configured[:2]
	m.RunFinished("s00001", calsyncd.OutcomeOK, calsyncd.StateActive, time.Second) // before the next scrape
	scrape()
	body = scrape()
	for _, want := range []string{`calsyncd_subscription_state{state="ACTIVE",subscription="s00001"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("back under the limit, the metrics lack %s", want)
		}
	}
	if strings.Contains(body, "calsyncd_subscriptions{") || strings.Contains(body, "calsyncd_oldest_last_success_timestamp_seconds ") {
		t.Errorf("back under the limit, the aggregates are still exported")
	}
	m.RunFinished("s00001", calsyncd.OutcomeOK, calsyncd.StateActive, time.Second)
	if body = scrape(); !strings.Contains(body, `calsyncd_runs_total{outcome="ok",subscription="s00001"} 1`) {
		t.Errorf("back under the limit, runs are not counted per subscription")
	}
}
