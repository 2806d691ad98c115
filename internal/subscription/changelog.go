package subscription

import (
	"context"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
)

// ChangeLog is a Store that keeps what each run wrote (the status page
// shows it); a Store that is not one keeps only the counts.
type ChangeLog interface {
	AddRunChanges(ctx context.Context, subscriptionID string, runID int64, changes []calsyncd.RunChange) error
}

// logChanges hands a ChangeLog what Google took of ops in res: deletes
// first (what a person most needs to see), then creates and updates in the
// order they were written, at most calsyncd.MaxRunChanges. Keeping them is
// no part of the sync: a failure is logged, and the run goes on.
func (r *Runner) logChanges(ctx context.Context, p pass, ops []diff.Op, res calsyncd.WriteResult) {
	cl, ok := r.Store.(ChangeLog)
	if !ok || len(res.Mapped)+len(res.Unmapped) == 0 {
		return
	}
	byKey := make(map[calsyncd.Key]*diff.Op, len(ops))
	for i := range ops {
		byKey[ops[i].Key] = &ops[i]
	}
	changes := make([]calsyncd.RunChange, 0, min(calsyncd.MaxRunChanges, len(res.Mapped)+len(res.Unmapped)))
	for _, k := range res.Unmapped {
		if op := byKey[k]; op != nil && op.Kind == diff.Delete && !op.Forget && len(changes) < calsyncd.MaxRunChanges {
			changes = append(changes, calsyncd.RunChange{Kind: calsyncd.RunDeleted, Key: k})
		}
	}
	for _, m := range res.Mapped {
		op := byKey[m.Key]
		if op == nil || op.Event == nil || len(changes) >= calsyncd.MaxRunChanges {
			continue
		}
		kind := calsyncd.RunUpdated
		if op.Kind == diff.Create {
			kind = calsyncd.RunCreated
		}
		changes = append(changes, calsyncd.RunChange{Kind: kind, Key: m.Key, Title: op.Event.Summary, Start: op.Event.Start.T, AllDay: op.Event.Start.AllDay})
	}
	if err := cl.AddRunChanges(context.WithoutCancel(ctx), p.sub.ID, p.run.ID, changes); err != nil {
		p.log.Warn("the run's changes could not be kept for the status page", "error", err)
	}
}
