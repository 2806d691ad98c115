package status

import (
	"context"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	calsyncd "github.com/calsyncd/calsyncd"
)

// SubscriptionSource is the state database as the subscription gauges read
// it.
type SubscriptionSource interface {
	Subscriptions(ctx context.Context) ([]calsyncd.SubscriptionState, error)
	LastSuccess(ctx context.Context, subscriptionID string) (time.Time, error)
}

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
)

// WatchSubscriptions adds the gauges the alerting rules read — state, held
// deletes, last successful run — for the configured subscriptions, read
// from the database at each scrape. So they are right straight after a
// restart (a subscription in ERROR may not run again for a day), agree
// between replicas sharing a database, and vanish when a subscription
// leaves the configuration. A database that does not answer fails the
// scrape.
func (m *Metrics) WatchSubscriptions(src SubscriptionSource, configured func() []string) {
	m.reg.MustRegister(&subscriptionCollector{src: src, configured: configured})
}

type subscriptionCollector struct {
	src        SubscriptionSource
	configured func() []string
}

func (c *subscriptionCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- stateDesc
	ch <- heldDeletesDesc
	ch <- lastSuccessDesc
}

func (c *subscriptionCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	states, err := c.src.Subscriptions(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(stateDesc, err)
		return
	}
	ids := c.configured()
	for _, st := range states {
		if !slices.Contains(ids, st.ID) {
			continue
		}
		last, err := c.src.LastSuccess(ctx, st.ID)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(lastSuccessDesc, err)
			return
		}
		if last.IsZero() {
			// Never successful yet: count from when it was added, so that
			// a subscription that never works is noticed too.
			last = st.CreatedAt
		}
		for _, s := range []calsyncd.State{calsyncd.StateActive, calsyncd.StateError} {
			v := 0.0
			if st.State == s || st.State == "" && s == calsyncd.StateActive {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, v, st.ID, string(s))
		}
		ch <- prometheus.MustNewConstMetric(heldDeletesDesc, prometheus.GaugeValue, float64(st.HeldDeletes), st.ID)
		ch <- prometheus.MustNewConstMetric(lastSuccessDesc, prometheus.GaugeValue, float64(last.Unix()), st.ID)
	}
}
