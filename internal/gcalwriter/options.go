package gcalwriter

import (
	"log/slog"
	"math/rand/v2"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// Options configure a Writer. A zero field takes its value from
// DefaultOptions, which reads the writer's defaults from
// calsyncd.DefaultWriterLimits (config's defaults come from there too).
type Options struct {
	Logger *slog.Logger
	// Account names the Google account, for logs and AccountMemory.
	Account string
	// Owner names the installation whose marks and ids the writer writes
	// and recognises (the zero Owner: the legacy form).
	Owner calsyncd.Owner
	// Memory, when set, persists the throttle window and learned spacing.
	Memory AccountMemory
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
	// Usage limits always wait at least an hour.
	RateWindow    time.Duration
	RateWindowCap time.Duration
	// RetryBase and RetryCap shape the retry backoff: base·2^(n-1), capped.
	RetryBase time.Duration
	RetryCap  time.Duration
	// BackfillShare of the slots a backfill may hold whatever the latency
	// (beyond it, it borrows slots no incremental request is waiting for;
	// see PacerOptions); BackfillThreshold:
	// plans with more ops are backfill (negative disables).
	BackfillShare     float64
	BackfillThreshold int
	// RequestTimeout bounds one request.
	RequestTimeout time.Duration
	// MaxGenerations bounds how many fresh ids we try when Google refuses
	// to let us reuse one.
	MaxGenerations int
	// Clock is the time package unless a benchmark injects its own.
	Clock Clock
	// Observer, when set, is told each write's outcome, each answer from
	// Google and the pacer's state (metrics).
	Observer Observer
	// QuotaUser, set when a service account impersonates a user, charges
	// the per-user quota to that user instead of the service account.
	QuotaUser string
	// Seed makes the retry jitter reproducible; 0 draws a random seed.
	Seed uint64
}

// Observer is told what the writer does. Outcomes are ok, deferred,
// failed, rejected and skipped; classes are the Class values, or "ok".
type Observer interface {
	WriteDone(subscription, op, outcome string)
	Response(account, class string)
	Retry(account string)
	Pacing(account string, spacing time.Duration, throttleUntil time.Time)
}

type noObserver struct{}

func (noObserver) WriteDone(string, string, string)        {}
func (noObserver) Response(string, string)                 {}
func (noObserver) Retry(string)                            {}
func (noObserver) Pacing(string, time.Duration, time.Time) {}

// DefaultOptions are the writer's defaults (calsyncd.DefaultWriterLimits):
// every zero Options field takes its value from them.
func DefaultOptions() Options { return OptionsFor(calsyncd.DefaultWriterLimits()) }

// OptionsFor are the options that pace, bound and retry as l says; the
// caller adds the account, its logger, memory and observer.
func OptionsFor(l calsyncd.WriterLimits) Options {
	return Options{
		Concurrency:       l.Concurrency,
		Spacing:           l.Spacing,
		MaxSpacing:        l.MaxSpacing,
		MaxAttempts:       l.MaxAttempts,
		MaxRetryWait:      l.MaxRetryWait,
		RateWindow:        l.RateWindow,
		RateWindowCap:     l.RateWindowCap,
		RetryBase:         l.RetryBase,
		RetryCap:          l.RetryCap,
		BackfillShare:     l.BackfillShare,
		BackfillThreshold: l.BackfillThreshold,
		RequestTimeout:    l.RequestTimeout,
		MaxGenerations:    l.MaxGenerations,
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Observer == nil {
		o.Observer = noObserver{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Concurrency < 1 {
		o.Concurrency = d.Concurrency
	}
	if o.Spacing <= 0 {
		o.Spacing = d.Spacing
	}
	if o.MaxSpacing < o.Spacing {
		o.MaxSpacing = max(o.Spacing, d.MaxSpacing)
	}
	if o.MaxAttempts < 1 {
		o.MaxAttempts = d.MaxAttempts
	}
	if o.MaxRetryWait <= 0 {
		o.MaxRetryWait = d.MaxRetryWait
	}
	if o.RateWindow <= 0 {
		o.RateWindow = d.RateWindow
	}
	if o.RateWindowCap < o.RateWindow {
		o.RateWindowCap = max(o.RateWindow, d.RateWindowCap)
	}
	if o.RetryBase <= 0 {
		o.RetryBase = d.RetryBase
	}
	if o.RetryCap < o.RetryBase {
		o.RetryCap = max(o.RetryBase, d.RetryCap)
	}
	if o.BackfillShare <= 0 || o.BackfillShare > 1 {
		o.BackfillShare = d.BackfillShare
	}
	if o.BackfillThreshold == 0 {
		o.BackfillThreshold = d.BackfillThreshold
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = d.RequestTimeout
	}
	if o.MaxGenerations <= 0 {
		o.MaxGenerations = d.MaxGenerations
	}
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	if o.Seed == 0 {
		o.Seed = rand.Uint64()
	}
	return o
}
