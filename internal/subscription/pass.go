package subscription

// One sync of one subscription is a pass: a value handed forward through
// the stages below, each a function from the pass to the pass, read top to
// bottom. A stage fills in its own part and reads only what the stages
// before it wrote; a stage that ends the pass says so with its outcome
// (stop), and settle turns whatever was reached into the run's record and
// the subscription's next state. Only begin and load read the store, and
// none but settle changes the subscription's state.
//
//	begin      the run's record, the state it starts from, the render policy
//	           … the account's turn (Workers)
//	account    the account's writer, and whether Google still takes its
//	           credentials (one cheap request, shared by the account's
//	           passes): a revoked token fails even an unchanged feed's pass
//	move       a changed calendar or account, as Google names calendars:
//	           mirror anew (move.go)
//	fetch      conditional GET, the body streamed; not modified ⇒ settle
//	parse      ICS ⇒ normalised events from the stream; the same body as
//	           the last complete run ⇒ settle
//	load       the mappings and rejections (read once)
//	render     the subscription's filters and presentation (pure)
//	reconcile  when due: repair drift between Google and the mappings
//	shape      the feed as Google holds it (pure)
//	plan       desired vs mapped ⇒ creates, updates, deletes (pure)
//	guard      the mass-delete guard (pure)
//	apply      paced writes, each queued for the store's group commit as
//	           Google accepts it, flushed when the batch is done
//	vacate     a moved subscription's events out of its old calendar
//	settle     outcome ⇒ state machine, run record, validators, one log line
//
// When Google refuses a series, apply hands the pass back for a second
// round of shape → plan → guard → apply, in which the refusal (now a
// rejection) makes shape write the series as single events, so nothing is
// lost until the next run. A dry-run (Preview) stops after the first
// guard: it writes nothing, to Google or the store. See
// docs/architecture.md for the slots the next stages take.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/mapping"
	"github.com/calsyncd/calsyncd/internal/render"
)

// pass is one sync as it moves through the stages.
type pass struct {
	// begin
	sub   config.Subscription
	cfg   *config.Config
	opts  Options
	log   *slog.Logger
	run   calsyncd.Run               // its id and start
	found calsyncd.SubscriptionState // the state the run starts from
	known known
	// firstSync: nothing mapped yet, so the writes are a backfill.
	firstSync    bool
	reconcileDue bool
	// died: a run since the last reconcile never finished.
	died bool
	// policy is the subscription's render policy; dryRun: the pass stops
	// at the plan and writes nothing (Preview).
	policy *render.Policy
	dryRun bool

	// fetch
	resp *fetch.Response
	// comeBack is when the feed server asked us to fetch again.
	comeBack time.Time
	// feedAnswered: the feed server answered the fetch (or it failed),
	// other than with 429; feed429: it answered 429 Too Many Requests.
	feedAnswered, feed429 bool
	// parse
	now time.Time // the time the feed is read at
	cal *feed.Calendar
	// render: what the filters took out and the alarms left behind
	rendered render.Result
	// feedEvents is how many events the feed has within the window, kept
	// when the events themselves are let go (releaseFeed); inFeed the
	// rejections' keys among them, for forgetRejections.
	feedEvents int
	released   bool
	inFeed     map[calsyncd.Key]bool
	// account: its writer; checked, Google answered the credential check.
	writer  Writer
	checked bool
	// reconcile
	repaired *repaired
	// move and vacate (move.go): where the events were until this run,
	// whether their mappings were let go, and what became of the
	// calendars left behind.
	movedFrom *calsyncd.Location
	// movedKnown are the event ids the store mapped in the calendar moved
	// away from, read before the move lets them go: what vacate may weigh
	// as the subscription's. Ours by mark but not here are strays.
	movedKnown map[string]bool
	// renamed: the calendar configured is the one the events are in,
	// under another of its ids ("primary" and the account's address).
	renamed     bool
	moveApplied bool
	vacated     []vacatedCalendar
	vacateHeld  string

	// shape, plan, guard and apply run once, twice when Google refused a
	// series in the first round.
	round  int
	shaped diff.Shaped
	// shapeReach is how far past now shape wrote single events (its To).
	shapeReach time.Duration
	plan       diff.Plan
	mapped     int            // mappings within the window the plan was made against
	churn      *diff.UIDChurn // the first round's
	verdict    diff.Verdict   // the guard's, for the whole run
	// kept is what the subscription's write policy (deletes: never,
	// updates: never) took out of the plan.
	kept diff.Kept
	// peak is the guard's high-water mark of mappings, reached at peakAt.
	peak    int
	peakAt  time.Time
	planned PlanCounts // every round's plan, as guarded
	// unguarded are the first round's deletes before the guard; filtered
	// how many of them the filters caused.
	unguarded []diff.Op
	filtered  int
	// cutHeld are the deletes held because the body was cut before
	// END:VCALENDAR (holdCut).
	cutHeld int

	applied calsyncd.WriteResult
	refused int // series Google refused, shaped again in the second round

	// end is set by the stage that ended the pass early.
	end *ending
}

// ending is how a pass ended: its outcome, the error when there was one,
// and whether the feed's validators may be kept (nothing was left behind).
type ending struct {
	outcome calsyncd.Outcome
	err     error
	keep    bool
	// waitUntil is set when the pass did not fetch because the feed server
	// asked us to wait.
	waitUntil time.Time
	// interrupted: the run's context ended (shutdown) before the pass
	// could finish; what it could not do is no failure (deferred).
	interrupted bool
}

// repaired is what reconcile found and did.
type repaired struct {
	at                                    time.Time
	adopted, refreshed, duplicates, swept int
	// adoptedKeys are the keys of the mappings adopted: the run deletes
	// none of them (diff.GuardInput.Adopted).
	adoptedKeys map[calsyncd.Key]bool
	// skipped is why Google could not be listed (the sync goes on).
	skipped error
	// owned is the listing, for the first plan's drift check; drifted the
	// keys the plan writes back to the feed's version (content a person
	// edited in Google, instances of our series they edited), and
	// content those of them Google took.
	owned   []diff.Owned
	drifted map[calsyncd.Key]bool
	content int
}

func (p pass) stop(outcome calsyncd.Outcome, err error) pass {
	p.end = &ending{outcome: outcome, err: err}
	return p
}

func (p pass) over() bool { return p.end != nil }

// failed ends the pass as failed with err, unless the run's context
// ended: then err is what the cancellation did to the stage (a fetch
// cancelled mid-body, a request abandoned), not what the feed or Google
// did, and the pass is deferred. A feed timeout of the fetcher's own
// leaves ctx alone and stays a failure.
func (p pass) failed(ctx context.Context, err error) pass {
	if ctx.Err() != nil {
		return p.interrupt()
	}
	return p.stop(calsyncd.OutcomeFailed, err)
}

// interrupt ends the pass as deferred by shutdown: it neither counts
// toward ERROR nor resets the count, and leaves the last error as it was.
func (p pass) interrupt() pass {
	p.end = &ending{outcome: calsyncd.OutcomeDeferred, interrupted: true}
	return p
}

// sync is the pass, stage by stage.
func (r *Runner) sync(ctx context.Context, sub config.Subscription, opts Options) (Report, error) {
	p, err := r.begin(ctx, sub, opts)
	if err != nil {
		return Report{Subscription: sub.ID}, err
	}
	return r.settle(ctx, r.inTurn(ctx, p))
}

// inTurn runs the pass when its account's turn comes (Workers): a begun
// pass waits holding nothing but its run's record.
func (r *Runner) inTurn(ctx context.Context, p pass) pass {
	release, err := r.Workers.account(ctx, p.opts.Drain, p.sub.AccountName())
	if err != nil {
		// Shut down before its turn: nothing was done, nothing is lost.
		return p.stop(calsyncd.OutcomeDeferred, nil)
	}
	defer release()
	return r.vacate(ctx, r.run(ctx, p))
}

// run takes a begun pass as far as it goes.
func (r *Runner) run(ctx context.Context, p pass) pass {
	if p = r.account(ctx, p); p.over() {
		return p
	}
	if p = r.move(ctx, p); p.over() {
		return p
	}
	if p = r.read(ctx, p); p.over() {
		return p
	}
	if p = r.load(ctx, p); p.over() {
		return p
	}
	if p = r.renderEvents(ctx, p); p.over() {
		return p
	}
	if p.reconcileDue {
		if p = r.reconcile(ctx, p); p.over() {
			return p
		}
	}
	if p = r.migrate(ctx, p); p.over() {
		return p
	}
	for p.round = 1; ; p.round++ {
		if p = guard(plan(shape(p))); p.over() || p.dryRun {
			return p
		}
		if p = r.apply(ctx, p); p.over() || p.refused == 0 || p.round > 1 {
			return p
		}
	}
}

// begin records the run's start and reads the state it starts from. It
// reads no mappings: a feed that has not changed needs none.
func (r *Runner) begin(ctx context.Context, sub config.Subscription, opts Options) (pass, error) {
	st, err := r.Store.EnsureSubscription(ctx, sub.ID, sub.Calendar, sub.AccountName())
	if err != nil {
		return pass{}, err
	}
	p := r.newPass(sub, opts, st)
	if p.run.ID, err = r.Store.StartRun(ctx, sub.ID, p.run.StartedAt); err != nil {
		return pass{}, err
	}
	if opts.Started != nil {
		opts.Started(p.run.ID)
	}
	if u, ok := r.Store.(unfinishedRuns); ok && !st.LastReconcileAt.IsZero() {
		if p.died, err = u.UnfinishedRun(ctx, sub.ID, st.LastReconcileAt, p.run.ID); err != nil {
			return pass{}, err
		}
	}
	return r.decide(p), nil
}

// unfinishedRuns is a store that tells whether a run never finished since
// the last reconcile (*store.Store is one).
type unfinishedRuns interface {
	UnfinishedRun(ctx context.Context, subscriptionID string, since time.Time, before int64) (bool, error)
}

func (r *Runner) newPass(sub config.Subscription, opts Options, st calsyncd.SubscriptionState) pass {
	return pass{sub: sub, cfg: r.config(), opts: opts, found: st,
		log: r.log().With("subscription", sub.ID, "feed", config.RedactURL(sub.URL)),
		run: calsyncd.Run{SubscriptionID: sub.ID, StartedAt: r.now()}}
}

// decide reads the subscription's render policy and decides what the pass
// is: a reconcile or not. It reads no mappings: a feed that has not
// changed needs none.
func (r *Runner) decide(p pass) pass {
	var err error
	if p.policy, err = p.cfg.RenderPolicy(p.sub); err != nil {
		return p.stop(calsyncd.OutcomeFailed, err)
	}
	// A subscription never reconciled (its first sync, or a database that
	// was lost) compares Google with its mappings, in case Google holds
	// our events already.
	every := p.cfg.Sync.ReconcileInterval.D()
	p.reconcileDue = p.opts.Reconcile || p.found.LastReconcileAt.IsZero() || (every > 0 && r.now().Sub(p.found.LastReconcileAt) >= every)
	// A run that died between Google's answers and their commit may have
	// left events of ours in Google that no mapping knows: the next run
	// finds them at once rather than at the daily reconcile.
	if p.died && !p.reconcileDue {
		p.reconcileDue = true
		p.log.Info("a run since the last reconcile never finished (its process died or was abandoned): reconciling with Google")
	}
	return p
}

// read fetches and parses the feed, no more passes at once than the
// Workers' prepare bound.
func (r *Runner) read(ctx context.Context, p pass) pass {
	release, err := r.Workers.preparing(ctx, p.opts.Drain)
	if err != nil {
		return p.stop(calsyncd.OutcomeDeferred, nil)
	}
	defer release()
	if p = r.fetch(ctx, p); p.over() {
		return p
	}
	return r.parse(ctx, p)
}

// load reads what the store knows of the subscription's events, its
// mappings and its rejections, once: the feed changed (or the pass reads
// it in full), so the pass will plan.
func (r *Runner) load(ctx context.Context, p pass) pass {
	var err error
	// A moved subscription's mappings are the old calendar's: it plans
	// against none (move).
	if p.movedFrom == nil {
		if p.known.mappings, err = r.Store.Mappings(ctx, p.sub.ID); err != nil {
			return p.stop(calsyncd.OutcomeFailed, err)
		}
		// A subscription's first sync is a backfill: it must not starve
		// the small changes of the account's other subscriptions.
		p.firstSync = len(p.known.mappings) == 0
	}
	if p.known.rejections, err = r.Store.Rejections(ctx, p.sub.ID); err != nil {
		return p.stop(calsyncd.OutcomeFailed, err)
	}
	return p
}

// fetch gets the feed, conditionally: a feed unchanged since the last
// complete run ends the pass with nothing to do.
func (r *Runner) fetch(ctx context.Context, p pass) pass {
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
		p = p.stop(calsyncd.OutcomeDeferred, nil)
		p.end.waitUntil = p.found.FetchNotBefore
		return p
	}
	resp, err := r.Fetcher.Open(ctx, req)
	if err != nil && ctx.Err() != nil {
		// Shut down while the feed was being read: the feed server did
		// not answer, so it says nothing of the feed.
		return p.interrupt()
	}
	if err != nil {
		r.observeFetch(p.sub.ID, "error")
		var ferr *fetch.Error
		if errors.As(err, &ferr) && ferr.RetryAfter > 0 {
			p.comeBack = r.now().Add(min(ferr.RetryAfter, 24*time.Hour))
		}
		// A feed server that rate-limits us is not broken: come back later.
		if ferr != nil && ferr.StatusCode == 429 {
			p.feed429 = true
			return p.stop(calsyncd.OutcomeDeferred, err)
		}
		p.feedAnswered = true
		return p.stop(calsyncd.OutcomeFailed, err)
	}
	p.resp, p.feedAnswered = resp, true
	if resp.NotModified && !p.full() {
		r.observeFetch(p.sub.ID, "not_modified")
		return p.stop(calsyncd.OutcomeNotModified, nil)
	}
	return p
}

// full: the pass reads the feed whatever its validators say: a reconcile
// needs the feed's events, and so do a changed render policy, a dry-run,
// a move until it is complete, and a window that moved past what the
// last render wrote (reread.go).
func (p pass) full() bool {
	return p.reconcileDue || p.dryRun || p.fingerprint() != p.found.RenderPolicy || p.moving() || p.rereadDue()
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

// unchanged: the body is the one of the last complete run (for servers
// that send no validators).
func (p pass) unchanged() bool {
	h := p.resp.BodyHash
	return p.resp.NotModified || (h != "" && h == p.found.BodyHash && p.found.ConsecutiveErrors == 0)
}

// parse reads the feed's events within the window, from the body as it
// arrives: the body, its lines and the parsed tree are never all held at
// once. The body's hash is known once it is read: a body unchanged since
// the last complete run ends the pass here, before any mapping is read.
func (r *Runner) parse(ctx context.Context, p pass) pass {
	win := p.cfg.EffectiveWindow(p.sub)
	p.now = r.now()
	opts := feed.Options{DefaultZone: p.cfg.EffectiveTimeZone(p.sub), Identity: feed.Identity(p.sub.Identity),
		WindowPast: win.PastReach(), WindowFuture: win.Future.D(), Now: p.now, Charset: p.resp.Charset, MaxEvents: p.cfg.EffectiveLimits(p.sub).MaxEvents}
	var (
		cal *feed.Calendar
		err error
	)
	if s := p.resp.Stream; s != nil {
		cal, err = feed.Parse(s, opts)
		hash, ferr := s.Finish()
		s.Close()
		if ferr != nil && ctx.Err() != nil {
			// Cut short by shutdown, not by the feed server.
			return p.interrupt()
		}
		if ferr != nil {
			// Cut short or too large: the fetch failed, whatever the
			// parser made of what it got.
			r.observeFetch(p.sub.ID, "error")
			return p.stop(calsyncd.OutcomeFailed, ferr)
		}
		p.resp.Stream, p.resp.BodyHash = nil, hash
	} else {
		cal, err = feed.ParseBytes(p.resp.Body, opts)
		p.resp.Body = nil
	}
	if p.unchanged() && !p.full() {
		r.observeFetch(p.sub.ID, "not_modified")
		return p.stop(calsyncd.OutcomeNotModified, nil)
	}
	if lim := (*feed.LimitError)(nil); errors.As(err, &lim) {
		// The parser stopped reading past limits.max_events: refused as
		// the guard refuses a feed over its limits.
		r.observeFetch(p.sub.ID, "ok")
		p.verdict.Refused = &diff.LimitError{What: "events", Key: "limits.max_events", Got: lim.Max, Max: lim.Max, AtLeast: true}
		return p.stop(calsyncd.OutcomeFailed, p.verdict.Refused)
	}
	if err != nil {
		// An HTML login page or a truncated body is a failed fetch too.
		r.observeFetch(p.sub.ID, "error")
		return p.stop(calsyncd.OutcomeFailed, err)
	}
	r.observeFetch(p.sub.ID, "ok")
	p.logWarnings(cal.Warnings)
	p.cal = cal
	return p
}

// account gets the writer of the subscription's Google account (a broken
// account fails this subscription alone) and asks Google whether it still
// takes the account's credentials, before the feed is read: a feed that
// has not changed writes nothing, and would otherwise never learn that a
// token was revoked. The request is shared by the account's passes that
// begin together; a rate limit on it is no verdict.
func (r *Runner) account(ctx context.Context, p pass) pass {
	w, err := r.Writer(p.sub.AccountName())
	if err != nil {
		return p.stop(calsyncd.OutcomeFailed, err)
	}
	p.writer = w
	answered, err := w.CheckAccount(ctx, p.sub.ID, p.sub.Calendar)
	p.checked = answered
	if err != nil {
		return p.failed(ctx, p.refusedAccount(err))
	}
	return p
}

// reconcile repairs drift between Google and our mappings before
// planning: owned events we have no mapping for are adopted (a lost
// database), mapped events deleted by hand are refreshed so the plan
// restores them, and duplicate copies are deleted. A failure to list is not
// fatal: the sync goes on without repairs.
func (r *Runner) reconcile(ctx context.Context, p pass) pass {
	if p = r.letGo(ctx, p); p.over() {
		return p
	}
	owned, err := p.writer.ListOwned(ctx, p.sub.Calendar, p.sub.ID)
	if err != nil {
		p.repaired = &repaired{skipped: err}
		return p
	}
	repair := diff.Reconcile(r.Owner, p.sub.ID, p.known.mappings, owned)
	p.repaired = &repaired{at: r.now(), adopted: len(repair.Adopt), refreshed: len(repair.Refresh), duplicates: len(repair.Duplicates),
		owned: owned, drifted: map[calsyncd.Key]bool{}, adoptedKeys: make(map[calsyncd.Key]bool, len(repair.Adopt))}
	if !p.movingBack() {
		// Adopted events are strays to the guard; but a calendar moved
		// back to holds the subscription's own events, left there to be
		// vacated: their deletes are weighed as any others.
		for _, m := range repair.Adopt {
			p.repaired.adoptedKeys[m.Key] = true
		}
	}
	found := append(repair.Adopt, repair.Refresh...)
	if !p.dryRun {
		changes := make([]calsyncd.Change, len(found))
		for i, m := range found {
			changes[i] = calsyncd.MappingSaved(m)
		}
		if err := r.Store.Record(context.WithoutCancel(ctx), p.sub.ID, changes...); err != nil {
			return p.stop(calsyncd.OutcomeFailed, err)
		}
	}
	p.known = p.known.put(found...)
	// Instances of our series a person edited by hand: the plan writes
	// them back to their series' occurrence. Their mappings stay the
	// pass's until Google takes the write (then the writer records them).
	for _, m := range repair.Edited {
		p.repaired.drifted[m.Key] = true
	}
	p.known = p.known.put(repair.Edited...)
	if len(repair.Duplicates) > 0 && !p.dryRun {
		// The sweep records nothing (duplicateSweeper), and what it reports
		// it deleted are copies: the mappings stay as they are.
		res := p.writer.Apply(ctx, diff.Batch{SubscriptionID: p.sub.ID, CalendarID: p.sub.Calendar, Ops: repair.Duplicates}, duplicateSweeper{})
		p.repaired.swept = res.Deleted
	}
	return p
}

// migrate moves the mappings of overrides written as events of their own
// (as calsyncd did before it wrote them as exceptions of their series:
// their id is our deterministic one, never Google's instance id) to a
// standalone key. The plan then deletes that event and writes the
// exception in its series.
func (r *Runner) migrate(ctx context.Context, p pass) pass {
	var moves []diff.Rekey
	for _, m := range p.known.mappings {
		if m.Key.Kind() == calsyncd.Instance && mapping.Derived(r.Owner, p.sub.ID, m.Key, m.Generation, m.EventID) {
			moves = append(moves, diff.Rekey{From: m, To: calsyncd.StandaloneKey(m.Key.UID, m.Key.Start())})
		}
	}
	if !p.dryRun {
		if err := r.rekey(ctx, p.sub.ID, moves); err != nil {
			return p.stop(calsyncd.OutcomeFailed, err)
		}
	}
	p.known = p.known.rekeyed(moves)
	return p
}

// shape turns the feed's events into Google's shape: overrides as
// exceptions of their series, series split at THISANDFUTURE, and series
// Google cannot hold (or refused) as single events within the window
// (bounded by a year each way when the window is open).
func shape(p pass) pass {
	win := p.cfg.EffectiveWindow(p.sub)
	opts := diff.ShapeOptions{From: p.now.Add(-expansionReach), To: p.now.Add(expansionReach),
		Unsupported: p.writer.Unsupported, Rejected: p.known.rejections,
		MaxExpanded: p.cfg.EffectiveLimits(p.sub).MaxInstancesExpanded}
	if past := win.PastReach(); past > 0 {
		opts.From = p.now.Add(-past)
	}
	if win.Future > 0 {
		opts.To = p.now.Add(win.Future.D())
	}
	p.shaped = diff.Shape(p.cal.Events, opts)
	p.shapeReach = opts.To.Sub(p.now)
	if p.round == 1 {
		p.feedEvents = len(p.cal.Events)
		if !anySeries(p.shaped.Events) {
			// No series: Google cannot refuse one, so there is no second
			// round to shape the feed again.
			p = p.releaseFeed()
		}
	}
	return p
}

// releaseFeed lets go of the feed's events once the first round has
// shaped them and no second round can need them (Google refuses only
// series): the shaped events are what plan, apply and vacate read, so a
// huge feed is not held twice while it is written. What the later stages
// read of the feed itself is kept: its size, its warnings, and which of
// the rejections it still has.
func (p pass) releaseFeed() pass {
	if p.released || p.cal == nil {
		return p
	}
	if len(p.known.rejections) > 0 {
		rejected := make(map[calsyncd.Key]bool, len(p.known.rejections))
		for _, rj := range p.known.rejections {
			rejected[rj.Key] = true
		}
		p.inFeed = map[calsyncd.Key]bool{}
		for i := range p.cal.Events {
			if k := p.cal.Events[i].Key(); rejected[k] {
				p.inFeed[k] = true
			}
		}
	}
	cal := *p.cal
	cal.Events = nil
	p.cal, p.rendered.Events, p.released = &cal, nil, true
	return p
}

// anySeries: some of the events are recurring.
func anySeries(events []feed.Event) bool {
	for i := range events {
		if events[i].IsRecurring() {
			return true
		}
	}
	return false
}

// writesSeries: the plan writes a recurring event, which Google may
// refuse (a second round).
func writesSeries(ops []diff.Op) bool {
	return slices.ContainsFunc(ops, func(op diff.Op) bool { return op.Event != nil && op.Event.IsRecurring() })
}

// plan compares the shaped feed with what we mapped. Only the window is
// mirrored: events that aged out of it stay in Google as they are, whether
// they are still in the feed or not (with window.past: now, every event
// that ended before the pass). The write policy then takes out what the
// subscription never writes (deletes: never, updates: never), before the
// guard weighs the deletes: a kept delete is no held one. The first round
// also looks for a feed that mints new UIDs on every fetch.
func plan(p pass) pass {
	win := p.cfg.EffectiveWindow(p.sub)
	inWindow := withinWindow(p.known.mappings, p.cal.Outside, p.now.Add(-win.PastReach()), win.PastReach() > 0)
	if rp := p.repaired; rp != nil && rp.owned != nil && p.round == 1 {
		inWindow = drifted(rp, p.shaped.Events, inWindow)
	}
	p.plan, p.kept = diff.Compute(p.shaped.Events, inWindow, p.known.rejections).Keep(p.writes())
	p.mapped = len(inWindow)
	if p.round == 1 {
		churn := diff.DetectUnstableUIDs(p.shaped.Events, inWindow)
		p.churn = &churn
	}
	return p
}

// drifted finds the mapped events a person edited in Google (reconcile's
// listing against the shaped feed) and clears their hash in a copy of the
// mappings the plan is made against, so that it writes them back.
func drifted(rp *repaired, shaped []feed.Event, inWindow []calsyncd.Mapping) []calsyncd.Mapping {
	keys := diff.Drifted(shaped, inWindow, rp.owned)
	if len(keys) == 0 {
		return inWindow
	}
	for _, k := range keys {
		rp.drifted[k] = true
	}
	out := slices.Clone(inWindow)
	for i := range out {
		if rp.drifted[out[i].Key] {
			out[i].Hash = ""
		}
	}
	return out
}

// guard refuses a feed over its cost limits (nothing is written: the run
// fails) and holds deletes that look like a broken feed rather than a
// change, weighed against the last run and the high-water mark (see
// diff.Guard); a second round follows the first round's verdict.
func guard(p pass) pass {
	if p.round == 1 {
		p.unguarded, p.filtered = p.plan.Deletes, filteredDeletes(p.plan.Deletes, p.rendered.Excluded)
		var cut int
		p, cut = p.holdCut()
		g, lim := p.cfg.Sync.DeleteGuard, p.cfg.EffectiveLimits(p.sub)
		p.peak, p.peakAt = diff.NextPeak(p.found.GuardPeak, p.found.GuardPeakAt, p.mapped, p.now, g.Period.D())
		p.plan, p.verdict = diff.Guard(p.plan, diff.GuardInput{Events: len(p.shaped.Events), Mapped: p.mapped, Peak: p.peak,
			FeedEvents: p.feedEvents, Expanded: p.shaped.ExpandedOccurrences(), ExpansionCut: p.shaped.ExpansionCut,
			Limits: diff.Limits{MaxEvents: lim.MaxEvents, MaxExpanded: lim.MaxInstancesExpanded},
			Runs:   p.found.GuardRuns, Base: p.found.GuardBase, Held: p.found.GuardHeld, ByConfig: p.byConfig(),
			Adopted: p.adopted, Allow: p.opts.AllowDeletes,
			Policy: diff.DeletePolicy{MinDeletes: g.MinDeletes, MaxFraction: g.MaxFraction, ConfirmRuns: g.ConfirmRuns}})
		p.planned.Unchanged = p.plan.Unchanged
		p.verdict.Held += cut
		if err := p.verdict.Refused; err != nil {
			return p.stop(calsyncd.OutcomeFailed, err)
		}
		if p.verdict.Released > 0 && g.Period > 0 {
			// The shrink is confirmed: the feed's new size is the mark.
			p.peak, p.peakAt = len(p.shaped.Events), p.now
		}
	} else {
		var cut int
		p, cut = p.holdCut()
		p.verdict.Held += cut
		p.plan, p.verdict = p.verdict.Follow(p.plan)
	}
	p.planned.Creates += len(p.plan.Creates)
	p.planned.Updates += len(p.plan.Updates)
	p.planned.Deletes += len(p.plan.Deletes)
	p.planned.HeldDeletes = p.verdict.Held
	p.planned.KeptDeletes, p.planned.KeptUpdates = len(p.kept.Deletes), len(p.kept.Updates)
	return p
}

// byConfig: the run's deletes follow a change of the configuration
// rather than of the feed: some are of events the filters exclude, or the
// fingerprint (filters, presentation, time zone, window, identity)
// differs from the last complete run's, or a hold that began so goes on.
// Waiting never confirms such deletes (diff.GuardInput.ByConfig).
func (p pass) byConfig() bool {
	changed := p.found.RenderPolicy != "" && p.fingerprint() != p.found.RenderPolicy
	return p.filtered > 0 || changed || (p.found.GuardRuns > 0 && p.found.GuardByConfig)
}

// adopted: the run adopted the key's event (reconcile found it in Google,
// this database never mapped it).
func (p pass) adopted(k calsyncd.Key) bool {
	return p.repaired != nil && p.repaired.adoptedKeys[k]
}

// heldAdopted are the deletes the guard held because the run adopted
// their events.
func (p pass) heldAdopted() []calsyncd.Key {
	if p.verdict.Adopted == 0 {
		return nil
	}
	var keys []calsyncd.Key
	for _, op := range p.unguarded {
		if !op.Forget && p.adopted(op.Key) {
			keys = append(keys, op.Key)
		}
	}
	return keys
}

// forgetAdopted lets go of the mappings of adopted events the feed no
// longer has: they were found in Google, never written by this database
// (a lost database, or an installation whose events look like ours), so
// the run leaves them where they are rather than keep them as ours to
// delete on a later run. Each reconcile finds them again and says so;
// --allow-deletes deletes them.
func (r *Runner) forgetAdopted(ctx context.Context, p pass) (pass, error) {
	keys := p.heldAdopted()
	if len(keys) == 0 {
		return p, nil
	}
	changes := make([]calsyncd.Change, len(keys))
	for i, k := range keys {
		changes[i] = calsyncd.MappingDeleted(k)
	}
	if err := r.Store.Record(context.WithoutCancel(ctx), p.sub.ID, changes...); err != nil {
		return p, err
	}
	p.known = p.known.drop(keys...)
	return p, nil
}

// apply writes the plan: first the mappings that only move to a new key
// (no write), then the paced writes, each persisted the moment Google
// accepts it. When Google refused a series the pass goes round again; after
// the last round, what Google no longer holds is forgotten.
func (r *Runner) apply(ctx context.Context, p pass) pass {
	var err error
	if p.round == 1 {
		if p, err = r.forgetAdopted(ctx, p); err != nil {
			return p.stop(calsyncd.OutcomeFailed, err)
		}
	}
	if err := r.rekey(ctx, p.sub.ID, p.plan.Rekeys); err != nil {
		return p.stop(calsyncd.OutcomeFailed, err)
	}
	p.known = p.known.rekeyed(p.plan.Rekeys)
	rec := &persister{store: r.Store, sub: p.sub.ID}
	ops := p.plan.Ops()
	// The writes are ops now: the plan's lists of them are not held
	// beside them while they are written (the guard counted them).
	p.plan.Creates, p.plan.Updates = nil, nil
	if p.round == 1 && !writesSeries(ops) {
		p = p.releaseFeed()
	}
	res := p.writer.Apply(ctx, diff.Batch{SubscriptionID: p.sub.ID, CalendarID: p.sub.Calendar, Ops: ops,
		Drain: p.opts.Drain, Backfill: p.firstSync}, rec)
	if err := rec.flush(ctx); err != nil {
		// Google has writes we could not record: the next run finds them
		// (409) and adopts them.
		return p.stop(calsyncd.OutcomeFailed, err)
	}
	r.logChanges(ctx, p, ops, res)
	p.known = p.known.recorded(res)
	if p.round == 1 && len(res.RefusedSeries) > 0 && res.Err == nil {
		// Google refused series as they stand: the next round writes them
		// as single events, in this run rather than the next.
		p.refused = len(res.RefusedSeries)
		p.applied = res.Reshaped()
		return p
	}
	p.applied = p.applied.Add(res)
	p.countRepaired()
	if err := r.forgetLeftBehind(ctx, &p); err != nil {
		return p.stop(calsyncd.OutcomeFailed, err)
	}
	if err := r.forgetRejections(ctx, &p); err != nil {
		return p.stop(calsyncd.OutcomeFailed, err)
	}
	return p
}

// forgetLeftBehind drops the mappings of the exceptions of series that
// were written under a new id: the exceptions stayed with the old event,
// and the next run writes them again.
func (r *Runner) forgetLeftBehind(ctx context.Context, p *pass) error {
	if len(p.applied.RecreatedSeries) == 0 {
		return nil
	}
	gone := map[calsyncd.Key]bool{}
	for _, k := range p.applied.RecreatedSeries {
		gone[k] = true
	}
	var (
		left    []calsyncd.Key
		changes []calsyncd.Change
	)
	for _, m := range p.known.mappings {
		if parent, ok := m.Key.Parent(); ok && gone[parent] {
			left = append(left, m.Key)
			changes = append(changes, calsyncd.MappingDeleted(m.Key))
		}
	}
	if err := r.Store.Record(context.WithoutCancel(ctx), p.sub.ID, changes...); err != nil {
		return err
	}
	p.known = p.known.drop(left...)
	return nil
}

// forgetRejections drops the rejections of events that left the feed.
func (r *Runner) forgetRejections(ctx context.Context, p *pass) error {
	inFeed := make(map[calsyncd.Key]bool, len(p.inFeed)+len(p.cal.Events)+len(p.shaped.Events))
	for k := range p.inFeed {
		inFeed[k] = true
	}
	for i := range p.cal.Events {
		inFeed[p.cal.Events[i].Key()] = true
	}
	for i := range p.shaped.Events {
		inFeed[p.shaped.Events[i].Key()] = true
	}
	var (
		gone    []calsyncd.Key
		changes []calsyncd.Change
	)
	for _, rj := range p.known.rejections {
		if !inFeed[rj.Key] {
			gone = append(gone, rj.Key)
			changes = append(changes, calsyncd.RejectionDeleted(rj.Key))
		}
	}
	if err := r.Store.Record(context.WithoutCancel(ctx), p.sub.ID, changes...); err != nil {
		return err
	}
	p.known = p.known.unreject(gone...)
	return nil
}

// settle turns the pass into the run's record and the subscription's next
// state, saves both (even when the caller's context is cancelled: what
// happened must not be lost), tells the Observer and logs the run's line.
func (r *Runner) settle(ctx context.Context, p pass) (Report, error) {
	e := p.ending()
	if e.outcome == calsyncd.OutcomeFailed && ctx.Err() != nil {
		// Whatever stage failed, it failed because shutdown cancelled the
		// run (a write, the store, a listing): deferred, not failed.
		e = ending{outcome: calsyncd.OutcomeDeferred, interrupted: true}
	}
	run := p.record(e)
	run.FinishedAt = r.now()
	next := p.nextState(e)
	tr := Apply(&next, e.outcome, p.cfg.Sync.ErrorThreshold)
	rep := Report{Subscription: p.sub.ID, Run: run, State: next.State, Transition: tr, Plan: p.planned, Err: e.err}
	if p.cal != nil {
		rep.Warnings = p.cal.Warnings
	}
	recordCtx := context.WithoutCancel(ctx)
	if err := r.Store.FinishRun(recordCtx, run); err != nil {
		return rep, err
	}
	if err := r.Store.SaveSubscription(recordCtx, next); err != nil {
		return rep, err
	}
	if r.Observer != nil {
		r.Observer.RunFinished(p.sub.ID, run.Outcome, next.State, run.FinishedAt.Sub(run.StartedAt))
		r.observeFiltered(p.sub.ID, run.Filtered)
		r.observeRepaired(p.sub.ID, run.Repaired)
	}
	if r.Listener != nil {
		r.Listener.Settled(p.settled(rep, next, e))
	}
	p.logRun(rep, e)
	return rep, nil
}

// countRepaired counts the drifted events Google took the write of.
func (p *pass) countRepaired() {
	rp := p.repaired
	if rp == nil || len(rp.drifted) == 0 {
		return
	}
	rp.content = 0
	done := map[calsyncd.Key]bool{}
	for _, m := range p.applied.Mapped {
		if rp.drifted[m.Key] && !done[m.Key] {
			done[m.Key] = true
			rp.content++
		}
	}
}
