package status

import "github.com/prometheus/client_golang/prometheus"

// Results of an alert, as calsyncd_alerts_sent_total counts them.
var alertResults = []string{"sent", "failed", "dropped"}

// CountAlerts registers calsyncd_alerts_sent_total with every event and
// result at zero, so that an alert rule on it sees a series before the
// first alert. The daemon calls it when webhooks are configured.
func (m *Metrics) CountAlerts(events []string) {
	c := m.alertCounter()
	for _, e := range events {
		for _, r := range alertResults {
			c.WithLabelValues(e, r)
		}
	}
}

// AlertSent counts one alert to one webhook: sent, failed (refused, or
// retries spent) or dropped (a full queue, or shutdown).
func (m *Metrics) AlertSent(event, result string) {
	m.alertCounter().WithLabelValues(event, result).Inc()
}

func (m *Metrics) alertCounter() *prometheus.CounterVec {
	m.alertsOnce.Do(func() {
		m.alerts = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "calsyncd_alerts_sent_total",
			Help: "Webhook alerts by event (error_entered, error_cleared, deletes_held, deletes_released, auth_failed, usage_limited) and result (sent, failed, dropped), per webhook.",
		}, []string{"event", "result"})
		m.reg.MustRegister(m.alerts)
	})
	return m.alerts
}
