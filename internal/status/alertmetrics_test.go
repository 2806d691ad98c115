package status_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/status"
)

func TestAlertMetrics(t *testing.T) {
	m := status.NewMetrics()
	scrape := func() string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(rec.Body)
		return string(b)
	}
	if strings.Contains(scrape(), "calsyncd_alerts_sent_total") {
		t.Fatal("the alert counter is there without webhooks")
	}
	m.CountAlerts([]string{"error_entered", "auth_failed"})
	m.AlertSent("error_entered", "sent")
	m.AlertSent("error_entered", "sent")
	m.AlertSent("auth_failed", "failed")
	out := scrape()
	for _, want := range []string{
		`calsyncd_alerts_sent_total{event="error_entered",result="sent"} 2`,
		`calsyncd_alerts_sent_total{event="auth_failed",result="failed"} 1`,
		`calsyncd_alerts_sent_total{event="auth_failed",result="dropped"} 0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %s:\n%s", want, out)
		}
	}
}
