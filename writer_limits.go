package calsyncd

import "time"

// WriterLimits are the numbers that pace, bound and retry an account's
// Google writer. DefaultWriterLimits is the one place their defaults are
// written: the configuration's writer block starts from them, and the
// writer falls back to them for every number left zero.
type WriterLimits struct {
	// Concurrency: requests in flight at once.
	Concurrency int
	// Spacing: least time between request starts; MaxSpacing bounds its
	// adaptive widening.
	Spacing    time.Duration
	MaxSpacing time.Duration
	// MaxAttempts per write and MaxRetryWait, the most a write waits in
	// backoff; then a rate-limited write is deferred.
	MaxAttempts  int
	MaxRetryWait time.Duration
	// RateWindow and RateWindowCap bound the account's throttle window
	// after a rate limit spent a write's retries (doubling from one to the
	// other).
	RateWindow    time.Duration
	RateWindowCap time.Duration
	// RetryBase and RetryCap shape the retry backoff: base·2^(n-1), capped.
	RetryBase time.Duration
	RetryCap  time.Duration
	// BackfillShare of the slots a backfill may hold whatever the latency;
	// BackfillThreshold: plans with more ops are backfill (negative
	// disables).
	BackfillShare     float64
	BackfillThreshold int
	// RequestTimeout bounds one request.
	RequestTimeout time.Duration
	// MaxGenerations bounds how many fresh ids are tried when Google
	// refuses to let one be reused.
	MaxGenerations int
}

// DefaultWriterLimits are the writer's defaults.
func DefaultWriterLimits() WriterLimits {
	return WriterLimits{
		Concurrency:       2,
		Spacing:           250 * time.Millisecond,
		MaxSpacing:        5 * time.Second,
		MaxAttempts:       5,
		MaxRetryWait:      15 * time.Second,
		RateWindow:        30 * time.Second,
		RateWindowCap:     15 * time.Minute,
		RetryBase:         time.Second,
		RetryCap:          32 * time.Second,
		BackfillShare:     0.75,
		BackfillThreshold: 50,
		RequestTimeout:    30 * time.Second,
		MaxGenerations:    5,
	}
}
