package gcalfake

import (
	"math"
	"net/http"
	"strings"
	"time"
)

// LimitMode is how the emulator refuses a write over the quota. Google
// answers rate limits in all three ways, and documents them as equivalent.
type LimitMode int

const (
	// RateLimit403 answers 403 usageLimits/rateLimitExceeded.
	RateLimit403 LimitMode = iota
	// UserRateLimit403 answers 403 usageLimits/userRateLimitExceeded.
	UserRateLimit403
	// RateLimit429 answers 429 usageLimits/rateLimitExceeded.
	RateLimit429
)

func (m LimitMode) String() string {
	switch m {
	case UserRateLimit403:
		return "403-userRateLimitExceeded"
	case RateLimit429:
		return "429"
	}
	return "403-rateLimitExceeded"
}

// Quota is a token bucket of writes (insert, update, patch, delete) per
// user, like Google's per-user limits and its unpublished "operational
// limits" on rapid writes to one calendar. Refused writes take no token.
type Quota struct {
	// Rate is how many writes per second refill a bucket; 0 disables the
	// quota.
	Rate float64
	// Burst is the bucket's size (at least 1).
	Burst int
	Mode  LimitMode
	// PerCalendar keeps one bucket per user and calendar instead of per
	// user.
	PerCalendar bool
	// RetryAfter sends a Retry-After header (whole seconds until the
	// bucket has a token again). Google does not promise one.
	RetryAfter bool
}

// UsageLimit is Calendar's anti-abuse limit: more than Creates events
// created by one user within Window makes that user read-only for Lockout:
// every write answers 403 usageLimits/quotaExceeded "Calendar usage limits
// exceeded." while reads still work.
type UsageLimit struct {
	Creates int
	Window  time.Duration
	Lockout time.Duration
}

// Faults are failures injected at random, drawn per request from the seed,
// so a run is reproducible however its requests interleave.
type Faults struct {
	// BackendError is the share of requests answered 500 backendError.
	BackendError float64
	// Unavailable is the share of requests answered 503.
	Unavailable float64
	// LostResponse is the share of accepted writes whose answer is lost:
	// the write is applied, then the connection is dropped.
	LostResponse float64
	// Unauthorized answers every request 401 authError.
	Unauthorized bool
	// WriteOutage is the share of writes answered 500 backendError while
	// reads are served: an outage of Google's write path.
	WriteOutage float64
}

type bucket struct {
	tokens float64
	last   time.Time
}

type usage struct {
	creates     []time.Time
	lockedUntil time.Time
}

// SetQuota replaces the write quota; buckets start full.
func (s *Server) SetQuota(q Quota) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quota = q
	s.buckets = map[string]*bucket{}
}

// ChangeQuota changes the write quota mid-run, as Google changes a limit:
// each bucket keeps the writes it holds (refilled at the old rate until
// now, and at most the new burst), instead of starting full as SetQuota's
// do. A quota switched on where there was none starts full.
func (s *Server) ChangeQuota(q Quota) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for _, b := range s.buckets {
		b.tokens = math.Min(float64(max(q.Burst, 1)), s.refilledLocked(b, now))
		b.last = now
	}
	s.quota = q
}

// refilledLocked is what b holds at now under the current quota.
func (s *Server) refilledLocked(b *bucket, now time.Time) float64 {
	return math.Min(float64(max(s.quota.Burst, 1)), b.tokens+now.Sub(b.last).Seconds()*s.quota.Rate)
}

// SetUsageLimit replaces the usage limit and forgets past creates.
func (s *Server) SetUsageLimit(u UsageLimit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usageLimit = u
	s.usage = map[string]*usage{}
}

// SetFaults replaces the injected faults.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

func isWrite(op string) bool {
	return op == "insert" || op == "update" || op == "patch" || op == "delete"
}

// userOf names the user a request is charged to: quotaUser when given (as
// Google does for domain-wide delegation), else the bearer token.
func userOf(r *http.Request) string {
	if u := r.URL.Query().Get("quotaUser"); u != "" {
		return u
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// admitLocked decides, before a request is served, whether it is refused
// by an injected fault, the usage limit or the write quota.
func (s *Server) admitLocked(op, user, calID string, key func() string) *APIError {
	if s.faults.Unauthorized {
		s.stats.Faults++
		return errAuth()
	}
	if p := s.faults.BackendError; p > 0 && s.drawLocked("backend", key()) < p {
		s.stats.Faults++
		return errBackend()
	}
	if p := s.faults.Unavailable; p > 0 && s.drawLocked("unavailable", key()) < p {
		s.stats.Faults++
		return errUnavailable()
	}
	if !isWrite(op) {
		return nil
	}
	if p := s.faults.WriteOutage; p > 0 && s.drawLocked("outage", key()) < p {
		s.stats.Faults++
		return errBackend()
	}
	now := s.now()
	if u := s.usage[user]; u != nil && now.Before(u.lockedUntil) {
		s.stats.UsageLimited++
		return errUsageLimits()
	}
	if ul := s.usageLimit; op == "insert" && ul.Creates > 0 {
		u := s.usageFor(user)
		u.creates = pruneBefore(u.creates, now.Add(-ul.Window))
		if len(u.creates) >= ul.Creates {
			u.lockedUntil = now.Add(ul.Lockout)
			u.creates = nil
			s.stats.UsageLimited++
			return errUsageLimits()
		}
	}
	if q := s.quota; q.Rate > 0 {
		key := user
		if q.PerCalendar {
			key += "\x00" + calID
		}
		b := s.buckets[key]
		burst := float64(max(q.Burst, 1))
		if b == nil {
			b = &bucket{tokens: burst, last: now}
			s.buckets[key] = b
		}
		b.tokens = s.refilledLocked(b, now)
		b.last = now
		if b.tokens < 1 {
			s.stats.RateLimited++
			e := errRateLimit(q.Mode)
			if q.RetryAfter {
				e.RetryAfter = time.Duration((1 - b.tokens) / q.Rate * float64(time.Second))
			}
			return e
		}
		b.tokens--
	}
	return nil
}

// recordCreateLocked counts a successful insert toward the usage limit.
func (s *Server) recordCreateLocked(user string) {
	if s.usageLimit.Creates > 0 {
		u := s.usageFor(user)
		u.creates = append(u.creates, s.now())
	}
}

func (s *Server) usageFor(user string) *usage {
	u := s.usage[user]
	if u == nil {
		u = &usage{}
		s.usage[user] = u
	}
	return u
}

func pruneBefore(ts []time.Time, cutoff time.Time) []time.Time {
	i := 0
	for i < len(ts) && ts[i].Before(cutoff) {
		i++
	}
	return ts[i:]
}

// SetLatency changes the delay of every answer (Options.Latency).
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}
