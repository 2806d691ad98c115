package status_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// The runner tells the metrics what its filters excluded.
var _ subscription.FilterObserver = (*status.Metrics)(nil)

func TestEventsFilteredMetric(t *testing.T) {
	m := status.NewMetrics()
	m.EventsFiltered("team", 4)
	m.EventsFiltered("team", 3)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `calsyncd_events_filtered_total{subscription="team"} 7`) {
		t.Errorf("metrics lack the filtered count:\n%s", rec.Body.String())
	}
}
