package subscription

import (
	"context"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
)

// applied is one round's writes: what Google took of them, the run's
// writes so far, and the pass's view of the store after them.
type applied struct {
	res   calsyncd.WriteResult // this round's
	total calsyncd.WriteResult // the run's, up to this round
	known known
	// refused is how many series Google refused in the first round, to be
	// shaped again in the second.
	refused int
	// repaired is how many of the drifted events Google took the write of.
	repaired int
}

// written is the run's writes so far (zero before the first apply).
func (p pass) written() calsyncd.WriteResult {
	for i := len(p.rounds) - 1; i >= 0; i-- {
		if a := p.rounds[i].applied; a != nil {
			return a.total
		}
	}
	return calsyncd.WriteResult{}
}

// apply writes the round's plan: first the mappings that only move to a
// new key (no write), then the paced writes (ops), each persisted the
// moment Google accepts it. When Google refused a series the pass goes
// round again; after the last round, what Google no longer holds is
// forgotten.
func (r *Runner) apply(ctx context.Context, p pass, ops []diff.Op) (applied, *ending) {
	k := p.known()
	pl := p.lastPlan()
	before := applied{total: p.written(), known: k}
	var err error
	if len(p.rounds) == 1 {
		if k, err = r.forgetAdopted(ctx, p, k); err != nil {
			return before, stop(calsyncd.OutcomeFailed, err)
		}
	}
	if err := r.rekey(ctx, p.sub.ID, pl.plan.Rekeys); err != nil {
		return before, stop(calsyncd.OutcomeFailed, err)
	}
	k = k.rekeyed(pl.plan.Rekeys)
	rec := &persister{store: r.Store, sub: p.sub.ID}
	res := p.account.writer.Apply(ctx, diff.Batch{SubscriptionID: p.sub.ID, CalendarID: p.sub.Calendar, Ops: ops,
		Drain: p.opts.Drain, Backfill: p.loaded.firstSync}, rec)
	if err := rec.flush(ctx); err != nil {
		// Google has writes we could not record: the next run finds them
		// (409) and adopts them.
		return before, stop(calsyncd.OutcomeFailed, err)
	}
	r.logChanges(ctx, p, ops, res)
	a := applied{res: res, known: k.recorded(res)}
	if len(p.rounds) == 1 && len(res.RefusedSeries) > 0 && res.Err == nil {
		// Google refused series as they stand: the next round writes them
		// as single events, in this run rather than the next.
		a.refused, a.total = len(res.RefusedSeries), res.Reshaped()
		return a, nil
	}
	a.total = before.total.Add(res)
	a.repaired = repairedContent(p.firstPlan().drifted, a.total)
	if a.known, err = r.forgetLeftBehind(ctx, p, a.total, a.known); err != nil {
		return a, stop(calsyncd.OutcomeFailed, err)
	}
	if a.known, err = r.forgetRejections(ctx, p, a.known); err != nil {
		return a, stop(calsyncd.OutcomeFailed, err)
	}
	return a, nil
}

// forgetAdopted lets go of the mappings of adopted events the feed no
// longer has: they were found in Google, never written by this database
// (a lost database, or an installation whose events look like ours), so
// the run leaves them where they are rather than keep them as ours to
// delete on a later run. Each reconcile finds them again and says so;
// --allow-deletes deletes them.
func (r *Runner) forgetAdopted(ctx context.Context, p pass, k known) (known, error) {
	keys := p.heldAdopted()
	if len(keys) == 0 {
		return k, nil
	}
	changes := make([]calsyncd.Change, len(keys))
	for i, key := range keys {
		changes[i] = calsyncd.MappingDeleted(key)
	}
	if err := r.Store.Record(context.WithoutCancel(ctx), p.sub.ID, changes...); err != nil {
		return k, err
	}
	return k.drop(keys...), nil
}

// forgetLeftBehind drops the mappings of the exceptions of series that
// were written under a new id: the exceptions stayed with the old event,
// and the next run writes them again.
func (r *Runner) forgetLeftBehind(ctx context.Context, p pass, res calsyncd.WriteResult, k known) (known, error) {
	if len(res.RecreatedSeries) == 0 {
		return k, nil
	}
	gone := map[calsyncd.Key]bool{}
	for _, key := range res.RecreatedSeries {
		gone[key] = true
	}
	var (
		left    []calsyncd.Key
		changes []calsyncd.Change
	)
	for _, m := range k.mappings {
		if parent, ok := m.Key.Parent(); ok && gone[parent] {
			left = append(left, m.Key)
			changes = append(changes, calsyncd.MappingDeleted(m.Key))
		}
	}
	if err := r.Store.Record(context.WithoutCancel(ctx), p.sub.ID, changes...); err != nil {
		return k, err
	}
	return k.drop(left...), nil
}

// forgetRejections drops the rejections of events that left the feed.
func (r *Runner) forgetRejections(ctx context.Context, p pass, k known) (known, error) {
	events, shaped := p.rendered.Events, p.shapedEvents()
	inFeed := make(map[calsyncd.Key]bool, len(p.rendered.inFeed)+len(events)+len(shaped))
	for key := range p.rendered.inFeed {
		inFeed[key] = true
	}
	for i := range events {
		inFeed[events[i].Key()] = true
	}
	for i := range shaped {
		inFeed[shaped[i].Key()] = true
	}
	var (
		gone    []calsyncd.Key
		changes []calsyncd.Change
	)
	for _, rj := range k.rejections {
		if !inFeed[rj.Key] {
			gone = append(gone, rj.Key)
			changes = append(changes, calsyncd.RejectionDeleted(rj.Key))
		}
	}
	if err := r.Store.Record(context.WithoutCancel(ctx), p.sub.ID, changes...); err != nil {
		return k, err
	}
	return k.unreject(gone...), nil
}

// repairedContent counts the drifted events Google took the write of.
func repairedContent(drifted map[calsyncd.Key]bool, res calsyncd.WriteResult) int {
	if len(drifted) == 0 {
		return 0
	}
	n := 0
	done := map[calsyncd.Key]bool{}
	for _, m := range res.Mapped {
		if drifted[m.Key] && !done[m.Key] {
			done[m.Key] = true
			n++
		}
	}
	return n
}
