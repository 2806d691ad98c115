package gcalwriter

import (
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// Backoff is how long to wait before retry number attempt (1 for the first
// retry): base·2^(attempt-1), capped at limit, with "equal jitter" — jitter,
// a uniform draw in [0, 1], places the wait in [d/2, d] so that writers that
// failed together do not come back together, while every wait still grows.
// A server's Retry-After is a floor: it is honoured even above the cap.
// Backoff reads no clock and draws no random number; callers supply both.
func Backoff(base, limit time.Duration, attempt int, jitter float64, floor time.Duration) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	jitter = min(max(jitter, 0), 1)
	d := base
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2 // cannot overflow: it stops doubling once it reaches the cap
	}
	d = min(d, limit)
	d = d/2 + time.Duration(jitter*float64(d-d/2))
	return max(d, floor)
}

// Throttle windows: while one is open, every write for the
// account is deferred without asking Google. A rate limit's window is
// bounded by the writer's RateWindow and RateWindowCap
// (writer.throttle_window, .throttle_window_max); a usage limit's by these.
const (
	usageWindowBase = time.Hour
	usageWindowCap  = 4 * time.Hour
)

// throttleUntil is when an account's throttle window closes after Google
// refused a write with c, the level-th window in a row (1 for the first).
// Rate limits wait rateBase doubling to rateCap; usage limits (the account
// is read-only for hours) wait 1 h doubling to 4 h and never less than an
// hour, so Google is probed at most hourly; the project's daily quota waits
// for Google's daily reset. A Retry-After is always honoured.
func throttleUntil(c Classification, level int, jitter float64, now time.Time, rateBase, rateCap time.Duration) time.Time {
	switch {
	case c.Daily:
		return maxTime(NextDailyReset(now), now.Add(c.RetryAfter))
	case c.Class == calsyncd.ClassUsageLimited:
		return now.Add(Backoff(usageWindowBase, usageWindowCap, level, jitter, max(c.RetryAfter, usageWindowBase)))
	default:
		return now.Add(Backoff(rateBase, rateCap, level, jitter, c.RetryAfter))
	}
}

// pacific is where Google's daily quotas reset at midnight. Without the
// time-zone database we assume standard time (UTC-8): during daylight time
// that waits an hour longer than needed, never shorter.
var pacific = func() *time.Location {
	if loc, err := time.LoadLocation("America/Los_Angeles"); err == nil {
		return loc
	}
	return time.FixedZone("PST", -8*60*60)
}()

// NextDailyReset is the first midnight Pacific time after now, when Google
// resets daily quotas.
func NextDailyReset(now time.Time) time.Time {
	p := now.In(pacific)
	return time.Date(p.Year(), p.Month(), p.Day()+1, 0, 0, 0, 0, pacific)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
