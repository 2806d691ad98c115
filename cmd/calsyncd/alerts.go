package main

import (
	"context"

	"github.com/calsyncd/calsyncd/internal/alert"
	"github.com/calsyncd/calsyncd/internal/config"
)

// alertFlushTimeout is how long a command waits at exit for its queued
// alerts to be delivered (retries included); those left are remembered as
// undelivered.
const alertFlushTimeout = config.AlertFlushTimeout

// startAlerts sends the runner's settled runs to the webhook alerts. The
// notifier reads the webhooks from the current configuration, so a reload
// takes effect at once; with none configured it does nothing.
func (a *app) startAlerts() {
	a.alerts = alert.New(alert.Options{Config: a.config, Memory: a.store, Logger: a.log, Observer: alertMetrics{a}})
	a.runner.Listener = a.alerts
}

// stopAlerts delivers what is queued, for at most alertFlushTimeout.
func (a *app) stopAlerts() {
	if a.alerts == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), alertFlushTimeout)
	defer cancel()
	if err := a.alerts.Close(ctx); err != nil {
		a.log.Warn("alerts: exiting before every alert was delivered", "waited", alertFlushTimeout.String())
	}
}

// alertEvents are the events calsyncd_alerts_sent_total counts.
func alertEvents() []string {
	out := make([]string, len(alert.Events))
	for i, e := range alert.Events {
		out[i] = string(e)
	}
	return out
}

// alertMetrics counts alerts in the daemon's metrics, once it has them (a
// one-shot sync has none). a.metrics is set before the first run starts,
// and every alert comes from a run.
type alertMetrics struct{ a *app }

func (m alertMetrics) AlertSent(event, result string) {
	if m.a.metrics != nil {
		m.a.metrics.AlertSent(event, result)
	}
}
