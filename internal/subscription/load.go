package subscription

import (
	"context"

	calsyncd "github.com/calsyncd/calsyncd"
)

// loaded is the load stage's result: what the store knows of the
// subscription's events, and whether the writes are a backfill.
type loaded struct {
	known known
	// firstSync: nothing mapped yet (or the subscription moved), so the
	// writes are a backfill: they must not starve the small changes of
	// the account's other subscriptions.
	firstSync bool
}

// load reads what the store knows of the subscription's events, its
// mappings and its rejections, once: the feed changed (or the pass reads
// it in full), so the pass will plan. A moved subscription's mappings are
// the old calendar's: it plans against none.
func (r *Runner) load(ctx context.Context, p pass) (loaded, *ending) {
	var (
		l   loaded
		err error
	)
	if p.moved.from == nil {
		if l.known.mappings, err = r.Store.Mappings(ctx, p.sub.ID); err != nil {
			return l, stop(calsyncd.OutcomeFailed, err)
		}
	}
	l.firstSync = len(l.known.mappings) == 0
	if l.known.rejections, err = r.Store.Rejections(ctx, p.sub.ID); err != nil {
		return l, stop(calsyncd.OutcomeFailed, err)
	}
	return l, nil
}

// known is the pass's view of what the store holds, as the latest result
// that changed it left it.
func (p pass) known() known {
	for i := len(p.rounds) - 1; i >= 0; i-- {
		if a := p.rounds[i].applied; a != nil {
			return a.known
		}
	}
	switch {
	case p.migrated != nil:
		return p.migrated.known
	case p.repaired != nil:
		return p.repaired.known
	}
	return p.loaded.known
}
