package gcalwriter

import (
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

func TestConfiguredRateWindow(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	rl := Classification{Class: calsyncd.ClassRateLimited}
	for level, want := range map[int][2]time.Duration{1: {time.Second, 2 * time.Second}, 2: {2 * time.Second, 4 * time.Second}, 6: {5 * time.Second, 10 * time.Second}} {
		for _, j := range []float64{0, 0.5, 1} {
			got := throttleUntil(rl, level, j, now, 2*time.Second, 10*time.Second).Sub(now)
			if got < want[0] || got > want[1] {
				t.Errorf("level %d jitter %v: window %v, want within %v", level, j, got, want)
			}
		}
	}
	// Usage limits ignore the configured rate window: at least an hour.
	if got := throttleUntil(Classification{Class: calsyncd.ClassUsageLimited}, 1, 0, now, 2*time.Second, 10*time.Second).Sub(now); got < time.Hour {
		t.Errorf("usage-limit window %v, want at least 1h", got)
	}
}
