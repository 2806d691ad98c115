package subscription

import (
	"context"
	"fmt"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
)

// repaired is the reconcile stage's result: what it found and did.
type repaired struct {
	at                                    time.Time
	adopted, refreshed, duplicates, swept int
	// adoptedKeys are the keys of the mappings adopted: the run deletes
	// none of them (diff.GuardInput.Adopted).
	adoptedKeys map[calsyncd.Key]bool
	// edited are the instances of our series a person edited by hand: the
	// plan writes them back to their series' occurrence.
	edited []calsyncd.Key
	// skipped is why Google could not be listed (the sync goes on).
	skipped error
	// owned is the listing, for the first plan's drift check.
	owned []diff.Owned
	// letGo: a moved subscription's old mappings were let go first.
	letGo bool
	// known is the pass's view of the store after the repairs.
	known known
}

// reconcile repairs drift between Google and our mappings before
// planning: owned events we have no mapping for are adopted (a lost
// database), mapped events deleted by hand are refreshed so the plan
// restores them, and duplicate copies are deleted. A failure to list is not
// fatal: the sync goes on without repairs.
func (r *Runner) reconcile(ctx context.Context, p pass) (*repaired, *ending) {
	letGo, end := r.letGo(ctx, p)
	if end != nil {
		return nil, end
	}
	k := p.known()
	owned, err := p.account.writer.ListOwned(ctx, p.sub.Calendar, p.sub.ID)
	if err != nil {
		return &repaired{skipped: err, letGo: letGo, known: k}, nil
	}
	repair := diff.Reconcile(r.Owner, p.sub.ID, k.mappings, owned)
	rp := &repaired{at: r.now(), adopted: len(repair.Adopt), refreshed: len(repair.Refresh), duplicates: len(repair.Duplicates),
		owned: owned, letGo: letGo, adoptedKeys: make(map[calsyncd.Key]bool, len(repair.Adopt))}
	if !p.movingBack() {
		// Adopted events are strays to the guard; but a calendar moved
		// back to holds the subscription's own events, left there to be
		// vacated: their deletes are weighed as any others.
		for _, m := range repair.Adopt {
			rp.adoptedKeys[m.Key] = true
		}
	}
	found := append(repair.Adopt, repair.Refresh...)
	if !p.dryRun {
		changes := make([]calsyncd.Change, len(found))
		for i, m := range found {
			changes[i] = calsyncd.MappingSaved(m)
		}
		if err := r.Store.Record(context.WithoutCancel(ctx), p.sub.ID, changes...); err != nil {
			return nil, stop(calsyncd.OutcomeFailed, err)
		}
	}
	// Instances of our series a person edited by hand: their mappings stay
	// the pass's until Google takes the write (then the writer records
	// them).
	for _, m := range repair.Edited {
		rp.edited = append(rp.edited, m.Key)
	}
	rp.known = k.put(found...).put(repair.Edited...)
	if len(repair.Duplicates) > 0 && !p.dryRun {
		// The sweep records nothing (duplicateSweeper), and what it reports
		// it deleted are copies: the mappings stay as they are.
		res := p.account.writer.Apply(ctx, diff.Batch{SubscriptionID: p.sub.ID, CalendarID: p.sub.Calendar, Ops: repair.Duplicates}, duplicateSweeper{})
		rp.swept = res.Deleted
	}
	return rp, nil
}

// adopted: the run adopted the key's event (reconcile found it in Google,
// this database never mapped it).
func (p pass) adopted(k calsyncd.Key) bool {
	return p.repaired != nil && p.repaired.adoptedKeys[k]
}

// settle keeps when the reconcile was done, and says what it found.
func (rp *repaired) settle(_ pass, s *settling) {
	if rp == nil {
		return
	}
	if rp.skipped == nil {
		s.state.LastReconcileAt = rp.at
	}
	switch {
	case rp.skipped != nil:
		s.find(true, "reconcile_skipped", rp.skipped.Error(), "reconcile_class", calsyncd.ClassOf(rp.skipped))
	case rp.adopted+rp.refreshed+rp.duplicates > 0:
		s.find(true, "reconciled_adopted", rp.adopted, "reconciled_restoring", rp.refreshed,
			"reconciled_duplicates", rp.duplicates, "duplicates_deleted", rp.swept)
	}
}

// ending is how a reconcile Google could not list ends the run: the run
// could not do what it was asked (an operator's --reconcile, or a
// reconcile that was due): a failure, unless Google only asked us to
// wait. The next run reconciles again. Nil: it was done.
func (rp *repaired) ending() *ending {
	if rp == nil || rp.skipped == nil {
		return nil
	}
	err := fmt.Errorf("subscription: reconcile: Google's events could not be listed: %w", rp.skipped)
	if c := calsyncd.ClassOf(rp.skipped); c == calsyncd.ClassRateLimited || c == calsyncd.ClassUsageLimited {
		return &ending{outcome: calsyncd.OutcomeDeferred, err: err}
	}
	return &ending{outcome: calsyncd.OutcomeFailed, err: err}
}
