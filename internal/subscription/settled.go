package subscription

import (
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
	v := p.verdict()
	s := calsyncd.Settled{
		Subscription: p.sub.ID, Account: p.sub.AccountName(), Run: rep.Run,
		From: rep.Transition.From, To: rep.Transition.To, ConsecutiveErrors: rep.Transition.ConsecutiveErrors,
		HeldDeletes: next.HeldDeletes, Released: v.Released, ReleasedByOperator: v.Allowed,
		CredentialsRefused: p.credentials(e),
	}
	if v.Held > 0 {
		s.HeldByFilters = p.filterHeld()
		s.HeldWhy = p.heldWhy()
		s.HeldAdopted = v.Adopted
	}
	switch rp := p.repaired; {
	case v.Adopted > 0:
		s.Strays = calsyncd.Holds
	case rp != nil && rp.skipped == nil && e.outcome == calsyncd.OutcomeOK:
		s.Strays = calsyncd.Cleared
	}
	s.UsageLimited, s.UsageLimitedUntil = p.usageLimit(rep.Run.FinishedAt)
	switch since := next.FeedThrottledSince; {
	case !since.IsZero() && p.run.StartedAt.Sub(since) >= feedThrottleNotice:
		s.FeedThrottled, s.FeedThrottledSince = calsyncd.Holds, since
	case p.fetched.answered:
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
	res := p.written()
	answered := p.account.checked || res.Writes()+res.Rejected > 0 || (p.repaired != nil && p.repaired.skipped == nil)
	for c, n := range res.ByClass {
		answered = answered || n > 0 && c.Authenticated()
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
	res := p.written()
	switch {
	case res.ThrottleClass == calsyncd.ClassUsageLimited && res.ThrottleUntil.After(now):
		return calsyncd.Holds, res.ThrottleUntil
	case res.Writes() > 0 && res.ThrottleUntil.IsZero():
		return calsyncd.Cleared, time.Time{}
	}
	return calsyncd.Unknown, time.Time{}
}
