package gcalwriter_test

import (
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

func TestBackoff(t *testing.T) {
	const base, limit = time.Second, 32 * time.Second
	tests := []struct {
		name    string
		attempt int
		jitter  float64
		floor   time.Duration
		want    time.Duration
	}{
		{"first retry, least jitter", 1, 0, 0, 500 * time.Millisecond},
		{"first retry, most jitter", 1, 1, 0, time.Second},
		{"second doubles", 2, 1, 0, 2 * time.Second},
		{"third", 3, 1, 0, 4 * time.Second},
		{"fourth, half jitter", 4, 0.5, 0, 6 * time.Second},
		{"capped", 6, 1, 0, 32 * time.Second},
		{"capped far beyond without overflow", 500, 1, 0, 32 * time.Second},
		{"capped, least jitter", 40, 0, 0, 16 * time.Second},
		{"Retry-After above the draw is the wait", 1, 1, 7 * time.Second, 7 * time.Second},
		{"Retry-After above the cap is still honoured", 9, 1, time.Minute, time.Minute},
		{"Retry-After below the draw does not shorten it", 3, 1, time.Second, 4 * time.Second},
		{"attempt 0 is the first", 0, 1, 0, time.Second},
		{"jitter out of range is clamped", 2, 7, 0, 2 * time.Second},
		{"negative jitter is clamped", 2, -1, 0, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gcalwriter.Backoff(base, limit, tt.attempt, tt.jitter, tt.floor); got != tt.want {
				t.Errorf("Backoff(attempt %d, jitter %v, floor %s) = %s, want %s", tt.attempt, tt.jitter, tt.floor, got, tt.want)
			}
		})
	}
}

func TestBackoffGrowsWithinEqualJitterBounds(t *testing.T) {
	const base, limit = time.Second, 8 * time.Second
	for attempt := 1; attempt <= 8; attempt++ {
		d := min(base<<(attempt-1), limit)
		for i := 0; i <= 100; i++ {
			j := float64(i) / 100
			got := gcalwriter.Backoff(base, limit, attempt, j, 0)
			if got < d/2 || got > d {
				t.Fatalf("attempt %d jitter %v: %s outside [%s, %s]", attempt, j, got, d/2, d)
			}
			// The same draw never waits less on a later attempt.
			if attempt > 1 && got < gcalwriter.Backoff(base, limit, attempt-1, j, 0) {
				t.Fatalf("attempt %d jitter %v waits less than attempt %d", attempt, j, attempt-1)
			}
		}
	}
	// Five attempts (four waits) stay within the ~15 s the design allows.
	var total time.Duration
	for attempt := 1; attempt <= 4; attempt++ {
		total += gcalwriter.Backoff(base, limit, attempt, 1, 0)
	}
	if total != 15*time.Second {
		t.Errorf("four most-jittered waits = %s, want 15s", total)
	}
}

func TestThrottleUntil(t *testing.T) {
	now := time.Date(2027, 3, 10, 12, 0, 0, 0, time.UTC) // 04:00 PST (UTC-8)
	rate := gcalwriter.Classification{Class: calsyncd.ClassRateLimited}
	usage := gcalwriter.Classification{Class: calsyncd.ClassUsageLimited}
	daily := gcalwriter.Classification{Class: calsyncd.ClassUsageLimited, Daily: true}
	tests := []struct {
		name   string
		c      gcalwriter.Classification
		level  int
		jitter float64
		want   time.Duration
	}{
		{"rate limit, first window", rate, 1, 1, 30 * time.Second},
		{"rate limit, first window, least jitter", rate, 1, 0, 15 * time.Second},
		{"rate limit doubles", rate, 3, 1, 2 * time.Minute},
		{"rate limit capped at 15 min", rate, 20, 1, 15 * time.Minute},
		{"rate limit with a long Retry-After", gcalwriter.Classification{Class: calsyncd.ClassRateLimited, RetryAfter: 20 * time.Minute}, 1, 1, 20 * time.Minute},
		{"usage limit, first window is an hour whatever the jitter", usage, 1, 0, time.Hour},
		{"usage limit doubles", usage, 2, 1, 2 * time.Hour},
		{"usage limit capped at 4 h", usage, 9, 1, 4 * time.Hour},
		{"usage limit never probes sooner than hourly", usage, 9, 0, 2 * time.Hour},
		{"daily quota waits for midnight Pacific", daily, 1, 1, 20 * time.Hour}, // 04:00 PST → 00:00 PST next day
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gcalwriter.ThrottleUntil(tt.c, tt.level, tt.jitter, now).Sub(now); got != tt.want {
				t.Errorf("window = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestNextDailyReset(t *testing.T) {
	tests := []struct {
		now, want string
	}{
		{"2027-01-11T07:59:00Z", "2027-01-11T08:00:00Z"}, // PST: midnight is 08:00 UTC
		{"2027-01-11T08:00:00Z", "2027-01-12T08:00:00Z"}, // exactly at the reset: the next one
		{"2027-07-01T06:30:00Z", "2027-07-01T07:00:00Z"}, // PDT: midnight is 07:00 UTC
		{"2027-03-14T06:00:00Z", "2027-03-14T08:00:00Z"}, // 22:00 PST on the eve of the switch to daylight time
	}
	for _, tt := range tests {
		now, _ := time.Parse(time.RFC3339, tt.now)
		want, _ := time.Parse(time.RFC3339, tt.want)
		if got := gcalwriter.NextDailyReset(now); !got.Equal(want) {
			t.Errorf("NextDailyReset(%s) = %s, want %s", tt.now, got.UTC().Format(time.RFC3339), tt.want)
		}
	}
}
