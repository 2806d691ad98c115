package diff

import calsyncd "github.com/calsyncd/calsyncd"

// Writes is a subscription's write policy: what of the plan it never
// makes (config deletes: never, updates: never).
type Writes struct {
	NeverDelete, NeverUpdate bool
}

// Kept is what a write policy took out of a plan: the writes mirroring
// would have made.
type Kept struct {
	// Deletes are the events that left the feed (or that a filter or a
	// cancellation takes out) kept in Google by deletes: never; their
	// mappings stay, so that an event's return is an update.
	Deletes []Op
	// Updates are the events left as they were written by updates:
	// never: changed in the feed, edited or deleted by a person in Google
	// (a reconcile's repairs), overrides reverted to their series, and
	// exceptions (a moved or cancelled occurrence) the feed added to a
	// series written before.
	Updates []Op
}

// Keep takes out of the plan what the policy never writes. A mapping-only
// delete (an exception forgotten with its series, Op.Forget) is no write
// of its own: it goes on when its series is still updated or deleted by
// the plan, and is otherwise left, unlisted, with the series as Google
// shows it.
func (p Plan) Keep(w Writes) (Plan, Kept) {
	var k Kept
	if !w.NeverDelete && !w.NeverUpdate {
		return p, k
	}
	if w.NeverUpdate {
		creates := p.Creates[:0:0]
		for _, op := range p.Creates {
			// An exception of a series written before changes that
			// series' occurrence: an update of what was written.
			if op.Key.Kind() == calsyncd.Instance && op.ParentMapping != nil {
				k.Updates = append(k.Updates, op)
				continue
			}
			creates = append(creates, op)
		}
		p.Creates = creates
		k.Updates = append(k.Updates, p.Updates...)
		p.Updates, p.Reverts = nil, 0
	}
	written := map[calsyncd.Key]bool{}
	for _, op := range p.Updates {
		written[op.Key] = true
	}
	if !w.NeverDelete {
		for _, op := range p.Deletes {
			written[op.Key] = true
		}
	}
	deletes := p.Deletes[:0:0]
	for _, op := range p.Deletes {
		switch pk, _ := op.Key.Parent(); {
		case op.Forget && written[pk]:
			deletes = append(deletes, op)
		case op.Forget:
		case w.NeverDelete:
			k.Deletes = append(k.Deletes, op)
		default:
			deletes = append(deletes, op)
		}
	}
	p.Deletes = deletes
	return p, k
}
