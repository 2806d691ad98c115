package status

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	calsyncd "github.com/calsyncd/calsyncd"
)

// Metrics are the daemon's Prometheus metrics, on a registry of their own
// (never the global default one). Labels carry subscription ids, account
// names, operations and classes — never URLs.
type Metrics struct {
	reg *prometheus.Registry

	writes        *prometheus.CounterVec
	deferred      *prometheus.CounterVec
	responses     *prometheus.CounterVec
	retries       *prometheus.CounterVec
	syncDuration  *prometheus.HistogramVec
	runs          *prometheus.CounterVec
	fetches       *prometheus.CounterVec
	spacing       *prometheus.GaugeVec
	throttleUntil *prometheus.GaugeVec
	filtered      *prometheus.CounterVec
	repaired      *prometheus.CounterVec

	alertsOnce sync.Once
	alerts     *prometheus.CounterVec

	// aggregate: beyond SubscriptionSeriesLimit subscriptions, the
	// metrics labelled by subscription are recorded with the label empty
	// (Prometheus then has one series, without the label, for all).
	aggregate   atomic.Bool
	aggregateMu sync.Mutex
}

// subscriptionLabel is the subscription label a metric is recorded with.
func (m *Metrics) subscriptionLabel(id string) string {
	if m.aggregate.Load() {
		return ""
	}
	return id
}

// setAggregate switches between series per subscription and aggregates;
// a switch forgets the series of the other kind (rate() reads that as a
// counter reset).
func (m *Metrics) setAggregate(on bool) {
	m.aggregateMu.Lock()
	defer m.aggregateMu.Unlock()
	if m.aggregate.Swap(on) == on {
		return
	}
	for _, v := range []interface{ Reset() }{m.writes, m.deferred, m.syncDuration, m.runs, m.fetches, m.filtered, m.repaired} {
		v.Reset()
	}
}

// NewMetrics registers every metric on a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.writes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "calsyncd_writes_total",
		Help: "Writes to Google by operation (create, update, delete) and outcome (ok, deferred, failed, rejected, skipped).",
	}, []string{"subscription", "op", "outcome"})
	m.deferred = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "calsyncd_deferred_writes_total",
		Help: "Writes deferred because Google rate- or usage-limited the account; the next run picks them up.",
	}, []string{"subscription"})
	m.responses = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "calsyncd_google_responses_total",
		Help: "Answers from Google by class (ok, rate_limited, usage_limited, transient, auth, gone, conflict, precondition, invalid).",
	}, []string{"account", "class"})
	m.retries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "calsyncd_retries_total",
		Help: "Retried requests to Google.",
	}, []string{"account"})
	m.syncDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "calsyncd_sync_duration_seconds",
		Help:    "Duration of sync runs.",
		Buckets: []float64{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 180, 600, 1800},
	}, []string{"subscription"})
	m.runs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "calsyncd_runs_total",
		Help: "Sync runs by outcome (ok, not_modified, deferred, partial, failed).",
	}, []string{"subscription", "outcome"})
	m.fetches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "calsyncd_feed_fetches_total",
		Help: "Feed fetches by result (ok, not_modified, error).",
	}, []string{"subscription", "result"})
	m.spacing = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "calsyncd_pacer_spacing_seconds",
		Help: "Current minimum spacing between request starts for the account.",
	}, []string{"account"})
	m.throttleUntil = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "calsyncd_throttle_window_until_seconds",
		Help: "Unix time until which the account's throttle window defers writes (0 when open).",
	}, []string{"account"})
	m.filtered = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "calsyncd_events_filtered_total",
		Help: "Feed events the subscription's filters excluded, counted on every run that read the feed.",
	}, []string{"subscription"})
	m.repaired = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "calsyncd_events_repaired_total",
		Help: "Owned events a reconcile found edited by hand in Google (title, time, place, description, ...) and wrote back to the feed's version.",
	}, []string{"subscription"})
	m.reg.MustRegister(m.writes, m.deferred, m.responses, m.retries, m.syncDuration, m.runs, m.fetches, m.spacing,
		m.throttleUntil, m.filtered, m.repaired, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry is the metrics' registry (for tests).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// FeedFetched counts a fetch: result is ok, not_modified or error.
func (m *Metrics) FeedFetched(subscription, result string) {
	m.fetches.WithLabelValues(m.subscriptionLabel(subscription), result).Inc()
}

// RunFinished records a finished run. The subscription's state is read
// from the database at each scrape (WatchSubscriptions), not from here.
func (m *Metrics) RunFinished(subscription string, outcome calsyncd.Outcome, state calsyncd.State, d time.Duration) {
	m.runs.WithLabelValues(m.subscriptionLabel(subscription), string(outcome)).Inc()
	m.syncDuration.WithLabelValues(m.subscriptionLabel(subscription)).Observe(d.Seconds())
}

// EventsFiltered counts the events a run's filters excluded.
func (m *Metrics) EventsFiltered(subscription string, n int) {
	m.filtered.WithLabelValues(m.subscriptionLabel(subscription)).Add(float64(n))
}

// EventsRepaired counts the events a run wrote back after a person edited
// them in Google.
func (m *Metrics) EventsRepaired(subscription string, n int) {
	m.repaired.WithLabelValues(m.subscriptionLabel(subscription)).Add(float64(n))
}

// WriteDone counts one write's outcome.
func (m *Metrics) WriteDone(subscription, op, outcome string) {
	m.writes.WithLabelValues(m.subscriptionLabel(subscription), op, outcome).Inc()
	if outcome == "deferred" {
		m.deferred.WithLabelValues(m.subscriptionLabel(subscription)).Inc()
	}
}

// Response counts an answer from Google by class ("ok" for success).
func (m *Metrics) Response(account, class string) {
	m.responses.WithLabelValues(account, class).Inc()
}

// Retry counts a retried request.
func (m *Metrics) Retry(account string) { m.retries.WithLabelValues(account).Inc() }

// Pacing records an account's pacer state.
func (m *Metrics) Pacing(account string, spacing time.Duration, throttleUntil time.Time) {
	m.spacing.WithLabelValues(account).Set(spacing.Seconds())
	v := 0.0
	if !throttleUntil.IsZero() {
		v = float64(throttleUntil.Unix())
	}
	m.throttleUntil.WithLabelValues(account).Set(v)
}

// SetBuildInfo publishes calsyncd_build_info{version,revision,goversion} 1,
// so a dashboard can tell which build each daemon runs.
func (m *Metrics) SetBuildInfo(version, revision, goVersion string) {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "calsyncd_build_info",
		Help: "The running build: its version, VCS revision and Go release (always 1).",
	}, []string{"version", "revision", "goversion"})
	g.WithLabelValues(version, revision, goVersion).Set(1)
	if err := m.reg.Register(g); err != nil {
		return // set once: a second call keeps the first
	}
}
