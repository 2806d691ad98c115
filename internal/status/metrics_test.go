package status_test

import (
	"context"
	"errors"
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

func (s *subscriptionSource) LastSuccess(_ context.Context, id string) (time.Time, error) {
	return s.last[id], nil
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
