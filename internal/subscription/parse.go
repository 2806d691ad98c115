package subscription

import (
	"context"
	"errors"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// parsed is the parse stage's result: the feed's events within the
// window, read at now, and the body's hash.
type parsed struct {
	now      time.Time
	cal      *feed.Calendar
	bodyHash string
}

// renderedAs is the parsed feed once render has taken over its events:
// what the later stages read of the feed itself (its name, warnings, cut,
// what lies outside the window), without the events.
func (pr parsed) renderedAs() parsed {
	if pr.cal != nil {
		cal := *pr.cal
		cal.Events = nil
		pr.cal = &cal
	}
	return pr
}

// parse reads the feed's events within the window, from the body as it
// arrives: the body, its lines and the parsed tree are never all held at
// once. When the body may be the one of the last complete run (a stored
// hash the pass may settle on), it is read whole and hashed first, and a
// body unchanged ends the pass here, before it is parsed or any mapping
// is read.
func (r *Runner) parse(ctx context.Context, p pass) (parsed, *ending) {
	win := p.cfg.EffectiveWindow(p.sub)
	resp := p.fetched.resp
	pr := parsed{now: r.now(), bodyHash: resp.BodyHash}
	opts := feed.Options{DefaultZone: p.cfg.EffectiveTimeZone(p.sub), Identity: feed.Identity(p.sub.Identity),
		WindowPast: win.PastReach(), WindowFuture: win.Future.D(), Now: pr.now, Charset: resp.Charset, MaxEvents: p.cfg.EffectiveLimits(p.sub).MaxEvents}
	body := resp.Body
	if s := resp.Stream; s != nil && p.mayBeUnchanged() {
		var ferr error
		body, pr.bodyHash, ferr = s.Whole()
		s.Close()
		if ferr != nil {
			return pr, r.fetchCutShort(ctx, p, ferr)
		}
	}
	if pr.unchanged(p) && !p.full() {
		r.observeFetch(p.sub.ID, "not_modified")
		return pr, stop(calsyncd.OutcomeNotModified, nil)
	}
	r.observeParse(p.sub.ID)
	var (
		cal *feed.Calendar
		err error
	)
	if s := resp.Stream; s != nil && body == nil {
		cal, err = feed.Parse(s, opts)
		hash, ferr := s.Finish()
		s.Close()
		if ferr != nil {
			return pr, r.fetchCutShort(ctx, p, ferr)
		}
		pr.bodyHash = hash
		if pr.unchanged(p) && !p.full() {
			r.observeFetch(p.sub.ID, "not_modified")
			return pr, stop(calsyncd.OutcomeNotModified, nil)
		}
	} else {
		cal, err = feed.ParseBytes(body, opts)
	}
	return r.parsedAs(p, pr, cal, err)
}

// parsedAs ends the parse stage with what the parser made of the body.
func (r *Runner) parsedAs(p pass, pr parsed, cal *feed.Calendar, err error) (parsed, *ending) {
	if lim := (*feed.LimitError)(nil); errors.As(err, &lim) {
		// The parser stopped reading past limits.max_events: refused as
		// the guard refuses a feed over its limits.
		r.observeFetch(p.sub.ID, "ok")
		refused := &diff.LimitError{What: "events", Key: "limits.max_events", Got: lim.Max, Max: lim.Max, AtLeast: true}
		e := stop(calsyncd.OutcomeFailed, refused)
		e.refused = refused
		return pr, e
	}
	if err != nil {
		// An HTML login page or a truncated body is a failed fetch too.
		r.observeFetch(p.sub.ID, "error")
		return pr, stop(calsyncd.OutcomeFailed, err)
	}
	r.observeFetch(p.sub.ID, "ok")
	p.logWarnings(cal.Warnings)
	pr.cal = cal
	return pr, nil
}

// fetchCutShort ends a pass whose body could not be read to its end: cut
// short or too large, the fetch failed, whatever the parser made of what
// it got; cut short by shutdown, it is deferred.
func (r *Runner) fetchCutShort(ctx context.Context, p pass, err error) *ending {
	if ctx.Err() != nil {
		return interrupted()
	}
	r.observeFetch(p.sub.ID, "error")
	return stop(calsyncd.OutcomeFailed, err)
}

// mayBeUnchanged: the pass would settle on a body hash equal to the
// stored one, so the hash is worth knowing before the body is parsed.
func (p pass) mayBeUnchanged() bool {
	return p.found.BodyHash != "" && p.found.ConsecutiveErrors == 0 && !p.full()
}

// parseObserver is an Observer that is also told when a feed is parsed
// (an unchanged body is not).
type parseObserver interface {
	FeedParsed(subscription string)
}

func (r *Runner) observeParse(id string) {
	if o, ok := r.Observer.(parseObserver); ok {
		o.FeedParsed(id)
	}
}

// unchanged: the body is the one of the last complete run (for servers
// that send no validators).
func (pr parsed) unchanged(p pass) bool {
	return p.fetched.resp.NotModified || (pr.bodyHash != "" && pr.bodyHash == p.found.BodyHash && p.found.ConsecutiveErrors == 0)
}

// settle keeps the feed's validators when nothing was left behind (they
// stand for the fingerprint they were kept with), and the cut note of a
// body that ends without END:VCALENDAR.
func (pr parsed) settle(p pass, s *settling) {
	if resp := p.fetched.resp; s.end.keep && resp != nil {
		s.state.ETag, s.state.LastModified, s.state.BodyHash = resp.ETag, resp.LastModified, pr.bodyHash
		s.state.RenderPolicy = p.fingerprint()
	}
	if pr.cal == nil {
		return
	}
	s.note(cutKind, p.cutNote())
	if ws := pr.cal.Warnings; len(ws) > 0 {
		s.find(true, "feed_warnings", len(ws), "first_warning", ws[0].String(), "warning_kinds", kindsOf(ws).summary())
	}
}
