package subscription

// One sync of one subscription is a pass: stages called in turn by run,
// each returning a result of its own that no later stage changes. The
// pass holds one field per result; a stage reads the results before it
// and returns its own (or an ending, when the pass goes no further), and
// settle folds every result reached, in order, into the run's record, the
// subscription's next state, the notes and the run's log line. Adding a
// stage is a file (its result, the stage, what it settles) and a line in
// run. Only begin, move and load read the store; only settle changes the
// subscription's state.
//
//	begin      the run's record, the state it starts from, the render policy
//	turn       the account's turn (Workers)
//	account    the account's writer, and whether Google still takes its
//	           credentials (one cheap request, shared by the account's
//	           passes): a revoked token fails even an unchanged feed's pass
//	move       a changed calendar or account, as Google names calendars:
//	           mirror anew
//	fetch      conditional GET, the body streamed; not modified ⇒ settle
//	parse      ICS ⇒ normalised events from the stream; the same body as
//	           the last complete run ⇒ settle
//	load       the mappings and rejections (read once)
//	render     the subscription's filters and presentation (pure)
//	reconcile  when due: repair drift between Google and the mappings
//	migrate    overrides written as events of their own move to their key
//	shape      the feed as Google holds it (pure)
//	plan       desired vs mapped ⇒ creates, updates, deletes (pure)
//	guard      cost limits, the mass-delete guard (pure)
//	apply      paced writes, each queued for the store's group commit as
//	           Google accepts it, flushed when the batch is done
//	vacate     a moved subscription's events out of its old calendar
//	settle     the results ⇒ state machine, run record, notes, one log line
//
// When Google refuses a series, shape, plan, guard and apply run a second
// round, in which the refusal (now a rejection) makes shape write the
// series as single events, so nothing is lost until the next run. A
// dry-run (Preview) stops after the first guard: it writes nothing, to
// Google or the store.

import (
	"context"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/diff"
)

// pass is one sync as it moves through the stages: one field per stage's
// result, each written once, by run, from what its stage returned.
type pass struct {
	begun // what the pass is: every stage reads it

	account  accounted
	moved    moved
	fetched  fetched
	parsed   parsed
	loaded   loaded
	rendered rendered
	repaired *repaired // nil: no reconcile this pass
	migrated *migrated
	rounds   rounds // plan and apply: once, twice when Google refused a series
	vacated  vacated

	// end is set when a stage ended the pass early.
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
	// refused is the cost limit the feed is over (the parser's count or
	// the guard's), when that ended the pass.
	refused *diff.LimitError
}

func stop(outcome calsyncd.Outcome, err error) *ending {
	return &ending{outcome: outcome, err: err}
}

// failed ends the pass as failed with err, unless the run's context
// ended: then err is what the cancellation did to the stage (a fetch
// cancelled mid-body, a request abandoned), not what the feed or Google
// did, and the pass is deferred. A feed timeout of the fetcher's own
// leaves ctx alone and stays a failure.
func failed(ctx context.Context, err error) *ending {
	if ctx.Err() != nil {
		return interrupted()
	}
	return stop(calsyncd.OutcomeFailed, err)
}

// interrupted ends the pass as deferred by shutdown: it neither counts
// toward ERROR nor resets the count, and leaves the last error as it was.
func interrupted() *ending {
	return &ending{outcome: calsyncd.OutcomeDeferred, interrupted: true}
}

func (p pass) over() bool { return p.end != nil }

// sync is the pass, stage by stage.
func (r *Runner) sync(ctx context.Context, sub config.Subscription, opts Options) (Report, error) {
	p, err := r.begin(ctx, sub, opts, false)
	if err != nil {
		return Report{Subscription: sub.ID}, err
	}
	return r.settle(ctx, r.turn(ctx, p))
}

// turn runs the pass when its account's turn comes (Workers): a begun
// pass waits holding nothing but its run's record.
func (r *Runner) turn(ctx context.Context, p pass) pass {
	if p.over() {
		return p
	}
	release, err := r.Workers.account(ctx, p.opts.Drain, p.sub.AccountName())
	if err != nil {
		// Shut down before its turn: nothing was done, nothing is lost.
		p.end = stop(calsyncd.OutcomeDeferred, nil)
		return p
	}
	defer release()
	p = r.run(ctx, p)
	p.vacated = r.vacate(ctx, p)
	return p
}

// run takes a begun pass as far as it goes: the stages in order, each
// result kept, until one ends the pass. What a later result took over is
// let go here, and only here, so that a huge feed is never held twice.
func (r *Runner) run(ctx context.Context, p pass) pass {
	if p.over() {
		return p
	}
	if p.account, p.end = r.checkAccount(ctx, p); p.over() {
		return p
	}
	if p.moved, p.end = r.move(ctx, p); p.over() {
		return p
	}
	if p.fetched, p.parsed, p.end = r.read(ctx, p); p.over() {
		return p
	}
	p.fetched = p.fetched.consumed()
	if p.loaded, p.end = r.load(ctx, p); p.over() {
		return p
	}
	if p.rendered, p.end = r.render(ctx, p); p.over() {
		return p
	}
	p.parsed = p.parsed.renderedAs()
	if p.reconcileDue() {
		if p.repaired, p.end = r.reconcile(ctx, p); p.over() {
			return p
		}
	}
	if p.migrated, p.end = r.migrate(ctx, p); p.over() {
		return p
	}
	return r.write(ctx, p)
}

// write is the rounds of plan and apply: a second when Google refused a
// series in the first. The feed's events are let go as soon as no round
// can need them (Google refuses only series): when the feed has none, and
// when the first round writes none.
func (r *Runner) write(ctx context.Context, p pass) pass {
	for n := 1; n <= 2; n++ {
		sh := shape(p, n)
		if n == 1 && !anySeries(sh.shaped.Events) {
			p.rendered = p.rendered.released(p.known())
		}
		planned, end := plan(p, sh)
		p.rounds = append(p.rounds, round{planned: planned})
		if p.end = end; p.over() || p.dryRun {
			return p
		}
		ops := planned.plan.Ops()
		if n == 1 && !writesSeries(ops) {
			p.rendered = p.rendered.released(p.known())
		}
		// The writes are ops now: the plan's lists of them are not held
		// beside them while they are written (the guard counted them).
		p.rounds[n-1].planned = planned.handedOver()
		applied, end := r.apply(ctx, p, ops)
		p.rounds[n-1].applied, p.end = &applied, end
		if p.over() || applied.refused == 0 {
			return p
		}
	}
	return p
}
