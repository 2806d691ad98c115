package subscription

import (
	"context"
	"errors"
	"fmt"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/fetch"
)

// fetched is the fetch stage's result: the feed server's answer, and what
// it said of when to come back.
type fetched struct {
	resp *fetch.Response
	// comeBack is when the feed server asked us to fetch again.
	comeBack time.Time
	// answered: the feed server answered the fetch (or it failed), other
	// than with 429; throttled: it answered 429 Too Many Requests.
	answered, throttled bool
}

// consumed is the answer once parse has read its body: its validators,
// not its bytes.
func (f fetched) consumed() fetched {
	if f.resp != nil {
		resp := *f.resp
		resp.Body, resp.Stream = nil, nil
		f.resp = &resp
	}
	return f
}

// read fetches and parses the feed, no more passes at once than the
// Workers' prepare bound.
func (r *Runner) read(ctx context.Context, p pass) (fetched, parsed, *ending) {
	release, err := r.Workers.preparing(ctx, p.opts.Drain)
	if err != nil {
		return fetched{}, parsed{}, stop(calsyncd.OutcomeDeferred, nil)
	}
	defer release()
	f, end := r.fetch(ctx, p)
	if end != nil {
		return f, parsed{}, end
	}
	p.fetched = f
	pr, end := r.parse(ctx, p)
	return f, pr, end
}

// fetch gets the feed, conditionally: a feed unchanged since the last
// complete run ends the pass with nothing to do.
func (r *Runner) fetch(ctx context.Context, p pass) (fetched, *ending) {
	req := fetch.Request{URL: p.sub.URL, Headers: p.sub.Headers}
	if a := p.sub.BasicAuth; a != nil {
		req.BasicAuth = &fetch.BasicAuth{Username: a.Username, Password: a.Password}
	}
	// After a failure, fetch in full: a clean run must prove the whole
	// pipeline works again. A reconcile needs the feed's events too, and so
	// do a changed render policy, a dry-run and a move until it is complete.
	if p.found.ConsecutiveErrors == 0 && !p.full() {
		req.ETag, req.LastModified = p.found.ETag, p.found.LastModified
	}
	if p.opts.Scheduled && r.now().Before(p.found.FetchNotBefore) {
		e := stop(calsyncd.OutcomeDeferred, nil)
		e.waitUntil = p.found.FetchNotBefore
		return fetched{}, e
	}
	resp, err := r.Fetcher.Open(ctx, req)
	if err != nil && ctx.Err() != nil {
		// Shut down while the feed was being read: the feed server did
		// not answer, so it says nothing of the feed.
		return fetched{}, interrupted()
	}
	if err != nil {
		return r.fetchFailed(p, err)
	}
	f := fetched{resp: resp, answered: true}
	if resp.NotModified && !p.full() {
		r.observeFetch(p.sub.ID, "not_modified")
		return f, stop(calsyncd.OutcomeNotModified, nil)
	}
	return f, nil
}

// fetchFailed is a fetch the feed server failed or refused: a server
// that rate-limits us is not broken, and is asked again when it says.
func (r *Runner) fetchFailed(p pass, err error) (fetched, *ending) {
	r.observeFetch(p.sub.ID, "error")
	var f fetched
	var ferr *fetch.Error
	if errors.As(err, &ferr) && ferr.RetryAfter > 0 {
		f.comeBack = r.now().Add(min(ferr.RetryAfter, 24*time.Hour))
	}
	if ferr != nil && ferr.StatusCode == 429 {
		f.throttled = true
		return f, stop(calsyncd.OutcomeDeferred, err)
	}
	f.answered = true
	return f, stop(calsyncd.OutcomeFailed, err)
}

// full: the pass reads the feed whatever its validators say: a reconcile
// needs the feed's events, and so do a changed render policy, a dry-run,
// a move until it is complete, and a window that moved past what the
// last render wrote (reread.go).
func (p pass) full() bool {
	return p.reconcileDue() || p.dryRun || p.fingerprint() != p.found.RenderPolicy || p.moving() || p.rereadDue()
}

// fingerprint names everything besides the feed's bytes that decides what
// the pass makes of them: the render policy, and how the feed is read (its
// floating time zone, identity and window). The validators stand only for
// the fingerprint they were kept with, so a change of any of these keys
// reads the feed in full on the next run, not once the feed changes.
func (p pass) fingerprint() string {
	win := p.cfg.EffectiveWindow(p.sub)
	fp := p.policy.Fingerprint() + fmt.Sprintf("read zone=%q identity=%q past=%d future=%d\n",
		p.cfg.EffectiveTimeZone(p.sub), p.sub.Identity, win.PastReach(), win.Future.D())
	// The write policy only when it keeps something: a subscription that
	// mirrors keeps the fingerprint it had before the keys existed.
	if w := p.writes(); w.NeverDelete || w.NeverUpdate {
		fp += fmt.Sprintf("writes never_delete=%t never_update=%t\n", w.NeverDelete, w.NeverUpdate)
	}
	return fp
}

// writes is the subscription's write policy.
func (p pass) writes() diff.Writes {
	w := p.cfg.EffectiveWrites(p.sub)
	return diff.Writes{NeverDelete: w.NeverDelete, NeverUpdate: w.NeverUpdate}
}

// feedThrottleNotice is how long a feed server must have answered every
// fetch with 429 before the status and the alerts say so: a rate limit
// is no failure (the subscription stays ACTIVE), but one that never ends
// means the calendar is no longer updated.
const feedThrottleNotice = 24 * time.Hour

// feedThrottledKind starts the note of a feed throttled for days.
const feedThrottledKind noteKind = "The feed server has answered every fetch with 429"

// settle follows the feed server's 429 streak: it starts at the first 429
// and ends at any other answer; after feedThrottleNotice the
// subscription's status says so. A server's Retry-After is kept.
func (f fetched) settle(p pass, s *settling) {
	st := &s.state
	if !f.comeBack.IsZero() {
		st.FetchNotBefore = f.comeBack
	}
	switch {
	case f.throttled && st.FeedThrottledSince.IsZero():
		st.FeedThrottledSince = p.run.StartedAt
	case f.answered:
		st.FeedThrottledSince = time.Time{}
	}
	if since := st.FeedThrottledSince; !since.IsZero() && p.run.StartedAt.Sub(since) >= feedThrottleNotice {
		s.note(feedThrottledKind, fmt.Sprintf("%s (too many requests) since %s: the calendar has not been updated since. "+
			"calsyncd keeps the subscription ACTIVE and comes back when the server says (Retry-After); if it lasts, "+
			"ask the feed's provider whether they limit this host, or sync less often (schedule)",
			feedThrottledKind, st.FeedThrottledSince.UTC().Format(time.RFC3339)))
	} else {
		s.note(feedThrottledKind)
	}
}
