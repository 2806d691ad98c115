package retryafter_test

import (
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/retryafter"
)

func TestParse(t *testing.T) {
	now := time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		"90":                            90 * time.Second,
		"-5":                            0,
		"soon":                          0,
		"Fri, 01 Jan 2027 12:05:00 GMT": 5 * time.Minute,
		"Fri, 01 Jan 2027 11:00:00 GMT": 0,
	} {
		if got := retryafter.Parse(in, "", now); got != want {
			t.Errorf("Parse(%q) = %v, want %v", in, got, want)
		}
	}
	// Never more than a day, however large.
	if got := retryafter.Parse("99999999999", "", now); got != 24*time.Hour {
		t.Errorf("huge Retry-After = %v, want 24h", got)
	}
	// An HTTP date counts from the server's own Date, not our clock.
	if got := retryafter.Parse("Fri, 01 Jan 2027 12:05:00 GMT", "Fri, 01 Jan 2027 12:04:00 GMT", now); got != time.Minute {
		t.Errorf("Retry-After against the Date header = %v, want 1m", got)
	}
}
