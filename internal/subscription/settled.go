package subscription

import (
	"fmt"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// Listener is told what each run settled on, once the run's record and
// the subscription's new state are saved: the alerts subscribe here. It
// is called on the run's goroutine and must not block (queue and return).
type Listener interface {
	Settled(s calsyncd.Settled)
}

// settled is what settle produced, as those who react to it see it.
func (p pass) settled(rep Report, next calsyncd.SubscriptionState, e ending) calsyncd.Settled {
	s := calsyncd.Settled{
		Subscription: p.sub.ID, Account: p.sub.AccountName(), Run: rep.Run,
		From: rep.Transition.From, To: rep.Transition.To, ConsecutiveErrors: rep.Transition.ConsecutiveErrors,
		HeldDeletes: next.HeldDeletes, Released: p.verdict.Released, ReleasedByOperator: p.verdict.Allowed,
		CredentialsRefused: p.credentials(e),
	}
	if p.verdict.Held > 0 {
		s.HeldByFilters = min(p.filtered, p.verdict.Held)
		s.HeldWhy = p.heldWhy()
		s.HeldAdopted = p.verdict.Adopted
	}
	switch rp := p.repaired; {
	case p.verdict.Adopted > 0:
		s.Strays = calsyncd.Holds
	case rp != nil && rp.skipped == nil && e.outcome == calsyncd.OutcomeOK:
		s.Strays = calsyncd.Cleared
	}
	s.UsageLimited, s.UsageLimitedUntil = p.usageLimit(rep.Run.FinishedAt)
	switch {
	case p.feedThrottled(next):
		s.FeedThrottled, s.FeedThrottledSince = calsyncd.Holds, next.FeedThrottledSince
	case p.feedAnswered:
		s.FeedThrottled = calsyncd.Cleared
	}
	return s
}

// credentials is what the run learnt of the account's credentials: Google
// refused them, or answered one of the account's requests (then it took
// them), or the run never asked.
func (p pass) credentials(e ending) calsyncd.Finding {
	if calsyncd.CredentialsRefused(e.err) || (p.repaired != nil && calsyncd.CredentialsRefused(p.repaired.skipped)) {
		return calsyncd.Holds
	}
	res := p.applied
	answered := p.checked || res.Writes()+res.Rejected > 0 || (p.repaired != nil && p.repaired.skipped == nil)
	for _, c := range []calsyncd.ErrorClass{calsyncd.ClassRateLimited, calsyncd.ClassUsageLimited, calsyncd.ClassGone,
		calsyncd.ClassConflict, calsyncd.ClassPrecondition, calsyncd.ClassInvalid} {
		// Google only ever answers these to a request it authenticated.
		answered = answered || res.ByClass[c] > 0
	}
	if answered {
		return calsyncd.Cleared
	}
	return calsyncd.Unknown
}

// usageLimit is whether the run ended with the account locked out by a
// usage limit, and until when; a run that wrote with no window open shows
// the lockout is over.
func (p pass) usageLimit(now time.Time) (calsyncd.Finding, time.Time) {
	res := p.applied
	switch {
	case res.ThrottleClass == calsyncd.ClassUsageLimited && res.ThrottleUntil.After(now):
		return calsyncd.Holds, res.ThrottleUntil
	case res.Writes() > 0 && res.ThrottleUntil.IsZero():
		return calsyncd.Cleared, time.Time{}
	}
	return calsyncd.Unknown, time.Time{}
}

// refusedError is Google refusing an account's credentials, with what the
// operator must do about it.
type refusedError struct {
	err  error
	hint string
}

func (e *refusedError) Error() string { return e.err.Error() + ": " + e.hint }
func (e *refusedError) Unwrap() error { return e.err }

// refusedAccount says what to do when Google refused the account's
// credentials; other errors (a calendar not found) are as they are.
func (p pass) refusedAccount(err error) error {
	if !calsyncd.CredentialsRefused(err) {
		return err
	}
	// Which kind the account is, googleauth knows (`auth status`); the
	// pass does not.
	name := p.sub.AccountName()
	hint := fmt.Sprintf("Google no longer takes the credentials of account %s (a revoked or expired token, a deleted key): "+
		"for a person's account run `calsyncd auth login --account %s`; for a service account give it a new key "+
		"(`calsyncd auth status` says which it is)", name, name)
	return &refusedError{err: err, hint: hint}
}
