package diff

import (
	"slices"

	calsyncd "github.com/calsyncd/calsyncd"
)

// Vacate is what to delete from a calendar a subscription moved away from:
// every live event we own there (as listed, with our marks), except
//
//   - the exceptions of a series: deleting the series takes them along;
//   - when the old calendar has the new one's id (only the account
//     changed), the new mirror's own events: an event mapped with the id
//     and the etag we hold is the same event, in the same calendar, seen
//     by the other account. A calendar of the same id that is not the same
//     (each account's "primary") holds other etags, and is vacated.
//
// It is pure; the caller lists the owned events and deletes.
func Vacate(owned []Owned, mirror []calsyncd.Mapping, sameID bool) []Op {
	held := map[string]string{}
	if sameID {
		for _, m := range mirror {
			held[m.EventID] = m.ETag
		}
	}
	var ops []Op
	for _, o := range owned {
		if o.Cancelled || o.Key.Kind() == calsyncd.Instance {
			continue
		}
		if etag, ok := held[o.EventID]; ok && etag == o.ETag {
			continue
		}
		m := calsyncd.Mapping{Key: o.Key, EventID: o.EventID, ETag: o.ETag}
		ops = append(ops, Op{Kind: Delete, Key: o.Key, Mapping: &m})
	}
	slices.SortFunc(ops, func(a, b Op) int { return compareKeys(a.Key, b.Key) })
	return ops
}
