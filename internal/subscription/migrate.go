package subscription

import (
	"context"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/mapping"
)

// migrated is the migrate stage's result: the pass's view of the store
// once the mappings it moved are under their new keys.
type migrated struct {
	moves int
	known known
}

// migrate moves the mappings of overrides written as events of their own
// (their id is our deterministic one, never Google's instance id) to a
// standalone key. The plan then deletes that event and writes the
// exception in its series.
func (r *Runner) migrate(ctx context.Context, p pass) (*migrated, *ending) {
	k := p.known()
	var moves []diff.Rekey
	for _, m := range k.mappings {
		if m.Key.Kind() == calsyncd.Instance && mapping.Derived(r.Owner, p.sub.ID, m.Key, m.Generation, m.EventID) {
			moves = append(moves, diff.Rekey{From: m, To: calsyncd.StandaloneKey(m.Key.UID, m.Key.Start())})
		}
	}
	if !p.dryRun {
		if err := r.rekey(ctx, p.sub.ID, moves); err != nil {
			return nil, stop(calsyncd.OutcomeFailed, err)
		}
	}
	return &migrated{moves: len(moves), known: k.rekeyed(moves)}, nil
}
