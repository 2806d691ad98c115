package gcalwriter

import (
	"time"

	"github.com/calsyncd/calsyncd"
)

// verdictKind is what a failed request leads to.
type verdictKind int

const (
	verdictRetry    verdictKind = iota // send it again after Verdict.Wait
	verdictFail                        // end the write with its error
	verdictThrottle                    // defer the write and open the window
)

// retryVerdict is the decision on one failed request, and the write's budget
// after it.
type retryVerdict struct {
	Kind   verdictKind
	Wait   time.Duration
	Budget budget
}

// decide is the retry policy: from the failure's classification, the
// write's budget so far, the options and a jitter in [0,1) it says whether
// to retry (after how long), fail or throttle. It has no side effects.
func decide(c Classification, bud budget, o Options, jitter float64) retryVerdict {
	switch c.Class {
	case calsyncd.ClassRateLimited, calsyncd.ClassTransient:
	case calsyncd.ClassUsageLimited:
		// The account is read-only for hours: retrying would only
		// prolong it.
		return retryVerdict{Kind: verdictThrottle, Budget: bud}
	case calsyncd.ClassAuth:
		if c.Code == 401 && !bud.reauthed {
			// Once more at once, with whatever token the source has now.
			bud.reauthed = true
			return retryVerdict{Kind: verdictRetry, Budget: bud}
		}
		return retryVerdict{Kind: verdictFail, Budget: bud}
	default:
		return retryVerdict{Kind: verdictFail, Budget: bud}
	}
	bud.attempts++
	wait := Backoff(o.RetryBase, o.RetryCap, bud.attempts, jitter, c.RetryAfter)
	if bud.attempts >= o.MaxAttempts || bud.waited+wait > o.MaxRetryWait {
		if c.Class == calsyncd.ClassRateLimited {
			return retryVerdict{Kind: verdictThrottle, Budget: bud}
		}
		return retryVerdict{Kind: verdictFail, Budget: bud}
	}
	return retryVerdict{Kind: verdictRetry, Wait: wait, Budget: bud}
}
