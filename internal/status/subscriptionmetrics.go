package status

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	calsyncd "github.com/calsyncd/calsyncd"
)

// SubscriptionSource is the state database as the subscription gauges read
// it.
type SubscriptionSource interface {
	Subscriptions(ctx context.Context) ([]calsyncd.SubscriptionState, error)
	// LastSuccesses is when the last successful run of each of ids
	// finished (absent: never).
	LastSuccesses(ctx context.Context, ids []string) (map[string]time.Time, error)
}

// SubscriptionSeriesLimit is the most configured subscriptions the metrics
// give series of their own. Beyond it every metric labelled by
// subscription is exported without that label (summed over all), and the
// per-subscription gauges give way to calsyncd_subscriptions,
// calsyncd_subscriptions_holding_deletes and
// calsyncd_oldest_last_success_timestamp_seconds: a scrape of 100,000
// subscriptions' series would be a few hundred megabytes, and each series
// costs Prometheus memory whether anyone looks at it or not.
const SubscriptionSeriesLimit = 10_000

// scrapeTimeout bounds the database reads of one scrape.
const scrapeTimeout = 5 * time.Second

var (
	stateDesc = prometheus.NewDesc("calsyncd_subscription_state",
		"1 for the subscription's current state (ACTIVE or ERROR), 0 for the other.", []string{"subscription", "state"}, nil)
	heldDeletesDesc = prometheus.NewDesc("calsyncd_held_deletes",
		"Deletes the mass-delete guard holds back for the subscription (0: none).", []string{"subscription"}, nil)
	lastSuccessDesc = prometheus.NewDesc("calsyncd_last_success_timestamp_seconds",
		"Unix time the subscription's last successful run (ok, partial, not_modified) finished; before its first, when it was added.",
		[]string{"subscription"}, nil)

	subscriptionsDesc = prometheus.NewDesc("calsyncd_subscriptions",
		"Configured subscriptions in each state (ACTIVE, ERROR); exported instead of calsyncd_subscription_state beyond the series limit.",
		[]string{"state"}, nil)
	holdingDeletesDesc = prometheus.NewDesc("calsyncd_subscriptions_holding_deletes",
		"Configured subscriptions whose deletes the mass-delete guard holds back; exported instead of calsyncd_held_deletes beyond the series limit.",
		nil, nil)
	oldestSuccessDesc = prometheus.NewDesc("calsyncd_oldest_last_success_timestamp_seconds",
		"The oldest calsyncd_last_success_timestamp_seconds of the configured subscriptions not in ERROR (absent: none); exported instead of it beyond the series limit.",
		nil, nil)
)

// WatchSubscriptions adds the gauges the alerting rules read — state, held
// deletes, last successful run — for the configured subscriptions, read
// from the database at each scrape. So they are right straight after a
// restart (a subscription in ERROR may not run again for a day), agree
// between replicas sharing a database, and vanish when a subscription
// leaves the configuration. A database that does not answer fails the
// scrape. Beyond SubscriptionSeriesLimit subscriptions, the gauges are
// aggregates and the other metrics lose their subscription label.
func (m *Metrics) WatchSubscriptions(src SubscriptionSource, configured func() []string) {
	m.setAggregate(len(configured()) > SubscriptionSeriesLimit)
	m.reg.MustRegister(&subscriptionCollector{m: m, src: src, configured: configured})
}

type subscriptionCollector struct {
	m          *Metrics
	src        SubscriptionSource
	configured func() []string
}

func (c *subscriptionCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{stateDesc, heldDeletesDesc, lastSuccessDesc, subscriptionsDesc, holdingDeletesDesc, oldestSuccessDesc} {
		ch <- d
	}
}

func (c *subscriptionCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	ids := c.configured()
	aggregate := len(ids) > SubscriptionSeriesLimit
	c.m.setAggregate(aggregate)
	all, err := c.src.Subscriptions(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(stateDesc, err)
		return
	}
	configured := make(map[string]bool, len(ids))
	for _, id := range ids {
		configured[id] = true
	}
	states := make([]calsyncd.SubscriptionState, 0, len(ids))
	watched := make([]string, 0, len(ids))
	for _, st := range all {
		if configured[st.ID] {
			states = append(states, st)
			watched = append(watched, st.ID)
		}
	}
	last, err := c.src.LastSuccesses(ctx, watched)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(lastSuccessDesc, err)
		return
	}
	var (
		inState = map[calsyncd.State]float64{calsyncd.StateActive: 0, calsyncd.StateError: 0}
		holding float64
		oldest  time.Time
		anyOK   bool // oldest is set
	)
	for _, st := range states {
		success, ok := last[st.ID]
		if !ok {
			// Never successful yet: count from when it was added, so that
			// a subscription that never works is noticed too.
			success = st.CreatedAt
		}
		state := st.State
		if state == "" {
			state = calsyncd.StateActive
		}
		if aggregate {
			inState[state]++
			if st.HeldDeletes > 0 {
				holding++
			}
			if state != calsyncd.StateError && (!anyOK || success.Before(oldest)) {
				oldest, anyOK = success, true
			}
			continue
		}
		for _, s := range []calsyncd.State{calsyncd.StateActive, calsyncd.StateError} {
			v := 0.0
			if state == s {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, v, st.ID, string(s))
		}
		ch <- prometheus.MustNewConstMetric(heldDeletesDesc, prometheus.GaugeValue, float64(st.HeldDeletes), st.ID)
		ch <- prometheus.MustNewConstMetric(lastSuccessDesc, prometheus.GaugeValue, float64(success.Unix()), st.ID)
	}
	if !aggregate {
		return
	}
	for s, n := range inState {
		ch <- prometheus.MustNewConstMetric(subscriptionsDesc, prometheus.GaugeValue, n, string(s))
	}
	ch <- prometheus.MustNewConstMetric(holdingDeletesDesc, prometheus.GaugeValue, holding)
	if anyOK {
		ch <- prometheus.MustNewConstMetric(oldestSuccessDesc, prometheus.GaugeValue, float64(oldest.Unix()))
	}
}
