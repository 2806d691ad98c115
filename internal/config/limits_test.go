package config_test

import (
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
)

// The cost limits and the guard's period join the numeric-key table
// (numbers_test.go), so every hostile value is tried on them too.
func init() {
	for key, k := range map[string]numericKey{
		"sync.delete_guard.period":                      {kind: "duration", zeroOK: true, ok: "7d", tooBig: "366d", tooSmall: "30m"},
		"limits.max_events":                             {kind: "int", ok: "20000", tooBig: "1000001"},
		"limits.max_instances_expanded":                 {kind: "int", ok: "5000", tooBig: "1000001"},
		"subscriptions[].limits.max_events":             {kind: "int", zeroOK: true, ok: "50000", tooBig: "1000001"},
		"subscriptions[].limits.max_instances_expanded": {kind: "int", zeroOK: true, ok: "100", tooBig: "1000001"},
		"limits.filter_time":                            {kind: "duration", ok: "10s", tooBig: "11m", tooSmall: "50ms"},
		"subscriptions[].limits.filter_time":            {kind: "duration", zeroOK: true, ok: "30s", tooBig: "11m", tooSmall: "50ms"},
	} {
		numericKeys[key] = k
	}
}

// TestEffectiveLimits: a subscription's limits override the global ones
// key by key; what it leaves out (or sets to 0) is the global value.
func TestEffectiveLimits(t *testing.T) {
	cfg, err := parse(t, `limits:
  max_events: 1000
subscriptions:
  - id: a
    url: https://example.com/a.ics
    calendar: a@example.com
  - id: b
    url: https://example.com/b.ics
    calendar: b@example.com
    limits:
      max_instances_expanded: 50
  - id: c
    url: https://example.com/c.ics
    calendar: c@example.com
    limits: {max_events: 30000, max_instances_expanded: 0}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]config.Limits{
		"a": {MaxEvents: 1000, MaxInstancesExpanded: 5000, FilterTime: config.Duration(10 * time.Second)},
		"b": {MaxEvents: 1000, MaxInstancesExpanded: 50, FilterTime: config.Duration(10 * time.Second)},
		"c": {MaxEvents: 30000, MaxInstancesExpanded: 5000, FilterTime: config.Duration(10 * time.Second)},
	}
	for _, s := range cfg.Subscriptions {
		if got := cfg.EffectiveLimits(s); got != want[s.ID] {
			t.Errorf("%s: limits %+v, want %+v", s.ID, got, want[s.ID])
		}
	}
}
