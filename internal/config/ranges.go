package config

import (
	"fmt"
	"strings"
	"time"
)

// The sane range of every numeric key. A value outside it is an error, not
// a value clamped in silence: NaN, a negative or a thousand years is a typo
// or an attack, and each once turned a guard off or made a loop spin. The
// README's configuration table gives the same ranges.

const day = 24 * time.Hour

// durationRange is one duration key's range; zero, when it means
// something, says what.
type durationRange struct {
	key      string
	v        Duration
	min, max time.Duration
	zero     string
}

// intRange is one whole-number key's range.
type intRange struct {
	key      string
	v        int
	min, max int
}

// fractionRange is a share in (0, 1].
type fractionRange struct {
	key string
	v   float64
}

func (c *Config) durationRanges() []durationRange {
	w, s := c.Writer, c.Sync
	out := []durationRange{
		{key: "store.lease_ttl", v: c.Store.LeaseTTL, min: 100 * time.Millisecond, max: time.Hour},
		{key: "writer.spacing", v: w.Spacing, min: 1, max: time.Minute},
		{key: "writer.max_spacing", v: w.MaxSpacing, min: 1, max: 10 * time.Minute},
		{key: "writer.max_retry_wait", v: w.MaxRetryWait, min: 1, max: time.Hour},
		{key: "writer.request_timeout", v: w.RequestTimeout, min: 1, max: 10 * time.Minute},
		{key: "writer.throttle_window", v: w.ThrottleWindow, min: 1, max: day},
		{key: "writer.throttle_window_max", v: w.ThrottleWindowMax, min: 1, max: 7 * day},
		{key: "writer.retry_base", v: w.RetryBase, min: 1, max: time.Hour},
		{key: "writer.retry_cap", v: w.RetryCap, min: 1, max: day},
		{key: "feed.timeout", v: c.Feed.Timeout, min: 1, max: time.Hour},
		{key: "limits.filter_time", v: c.Limits.FilterTime, min: 100 * time.Millisecond, max: 10 * time.Minute},
		{key: "feed.connect_timeout", v: c.Feed.ConnectTimeout, min: 1, max: 10 * time.Minute},
		{key: "sync.error_max_interval", v: s.ErrorMaxInterval, min: time.Minute, max: 30 * day},
		{key: "sync.reconcile_interval", v: s.ReconcileInterval, min: time.Minute, max: 365 * day, zero: "never"},
		{key: "sync.shutdown_timeout", v: s.ShutdownTimeout, min: 1, max: time.Hour},
		{key: "sync.retention.max_age", v: s.Retention.MaxAge, min: day, max: maxWindow, zero: "no age limit"},
		{key: "sync.delete_guard.period", v: s.DeleteGuard.Period, min: time.Hour, max: 365 * day, zero: "the last run only"},
	}
	out = append(out, windowRanges("window", c.Window)...)
	for i, sub := range c.Subscriptions {
		if sub.Limits != nil {
			out = append(out, durationRange{key: fmt.Sprintf("subscriptions[%d].limits.filter_time", i), v: sub.Limits.FilterTime,
				min: 100 * time.Millisecond, max: 10 * time.Minute, zero: "the global value"})
		}
		if sub.Window != nil {
			out = append(out, windowRanges(fmt.Sprintf("subscriptions[%d].window", i), *sub.Window)...)
		}
	}
	return out
}

// maxWindow bounds how far from now events are mirrored: ten years.
const maxWindow = 3660 * day

func windowRanges(prefix string, w Window) []durationRange {
	return []durationRange{
		{key: prefix + ".past", v: w.Past, min: 1, max: maxWindow, zero: "unbounded; now is future events only"},
		{key: prefix + ".future", v: w.Future, min: 1, max: maxWindow, zero: "unbounded"},
	}
}

func (c *Config) intRanges() []intRange {
	w, g := c.Writer, c.Sync.DeleteGuard
	out := []intRange{
		{key: "writer.concurrency", v: w.Concurrency, min: 1, max: 100},
		{key: "writer.max_attempts", v: w.MaxAttempts, min: 1, max: 100},
		{key: "writer.backfill_threshold", v: w.BackfillThreshold, min: 1, max: 1_000_000},
		{key: "sync.error_threshold", v: c.Sync.ErrorThreshold, min: 1, max: 1000},
		{key: "sync.delete_guard.min_deletes", v: g.MinDeletes, min: 0, max: 1_000_000},
		{key: "sync.delete_guard.confirm_runs", v: g.ConfirmRuns, min: 1, max: 1000},
		{key: "sync.retention.max_runs", v: c.Sync.Retention.MaxRuns, min: 10, max: 10_000_000},
		{key: "limits.max_events", v: c.Limits.MaxEvents, min: 1, max: maxLimit},
		{key: "limits.max_instances_expanded", v: c.Limits.MaxInstancesExpanded, min: 1, max: maxLimit},
	}
	for i, sub := range c.Subscriptions {
		if l := sub.Limits; l != nil {
			// 0 takes the top-level value.
			p := fmt.Sprintf("subscriptions[%d].limits.", i)
			out = append(out, intRange{key: p + "max_events", v: l.MaxEvents, min: 0, max: maxLimit},
				intRange{key: p + "max_instances_expanded", v: l.MaxInstancesExpanded, min: 0, max: maxLimit})
		}
	}
	return out
}

// maxLimit bounds the cost limits: a million events is far beyond any
// feed, and beyond what one Google calendar should be sent in a day.
const maxLimit = 1_000_000

func (c *Config) fractionRanges() []fractionRange {
	return []fractionRange{
		{key: "writer.backfill_share", v: c.Writer.BackfillShare},
		{key: "sync.delete_guard.max_fraction", v: c.Sync.DeleteGuard.MaxFraction},
	}
}

// Feed size bounds: a feed is held in memory whole.
const (
	minFeedSize = 1 << 10
	maxFeedSize = 1 << 30
)

// checkRanges reports every numeric key outside its range.
func (c *Config) checkRanges(bad func(key, format string, args ...any)) {
	for _, r := range c.durationRanges() {
		v := r.v.D()
		if v == 0 && r.zero != "" || v >= r.min && v <= r.max {
			continue
		}
		switch {
		case r.zero != "" && r.min <= 1:
			bad(r.key, "must be 0 (%s) or at most %s, got %s", r.zero, fmtDuration(r.max), fmtDuration(v))
		case r.zero != "":
			bad(r.key, "must be 0 (%s) or between %s and %s, got %s", r.zero, fmtDuration(r.min), fmtDuration(r.max), fmtDuration(v))
		case r.min <= 1:
			bad(r.key, "must be more than 0 and at most %s, got %s", fmtDuration(r.max), fmtDuration(v))
		default:
			bad(r.key, "must be between %s and %s, got %s", fmtDuration(r.min), fmtDuration(r.max), fmtDuration(v))
		}
	}
	for _, r := range c.intRanges() {
		if r.v < r.min || r.v > r.max {
			bad(r.key, "must be between %d and %d, got %d", r.min, r.max, r.v)
		}
	}
	for _, r := range c.fractionRanges() {
		// Written so that NaN fails too.
		if !(r.v > 0 && r.v <= 1) {
			bad(r.key, "must be more than 0 and at most 1, got %v", r.v)
		}
	}
	if m := c.Feed.MaxSize; m < minFeedSize || m > maxFeedSize {
		bad("feed.max_size", "must be between %s and %s, got %s", ByteSize(minFeedSize), ByteSize(maxFeedSize), m)
	}
	w := c.Writer
	if w.MaxSpacing.D() < w.Spacing.D() {
		bad("writer.max_spacing", "must not be below writer.spacing (%s)", fmtDuration(w.Spacing.D()))
	}
	if w.ThrottleWindowMax.D() < w.ThrottleWindow.D() {
		bad("writer.throttle_window_max", "must not be below writer.throttle_window (%s)", fmtDuration(w.ThrottleWindow.D()))
	}
	if w.RetryCap.D() < w.RetryBase.D() {
		bad("writer.retry_cap", "must not be below writer.retry_base (%s)", fmtDuration(w.RetryBase.D()))
	}
}

// fmtDuration writes a duration as the configuration would: whole days as
// "30d", otherwise Go's form without trailing zero units ("1m", not "1m0s").
func fmtDuration(d time.Duration) string {
	if d >= day && d%day == 0 {
		return fmt.Sprintf("%dd", d/day)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
