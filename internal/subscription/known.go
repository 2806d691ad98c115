package subscription

import (
	"cmp"
	"slices"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
)

// known is what the store holds of a subscription's events: its mappings,
// in key order as the store lists them, and its rejections. A pass reads
// it once, at its start, and keeps it in step with every change it makes
// or the writer reports, so no stage reads the store again. Its methods
// return a new value; the slices of the old one are never changed.
type known struct {
	mappings   []calsyncd.Mapping
	rejections []calsyncd.Rejection
}

func compareKeys(a, b calsyncd.Key) int {
	return cmp.Or(cmp.Compare(a.UID, b.UID), cmp.Compare(a.RecurrenceID, b.RecurrenceID))
}

// put saves mappings as the store's PutMapping does: replacing the mapping
// of the same key, and forgetting the key's rejection.
func (k known) put(ms ...calsyncd.Mapping) known {
	if len(ms) == 0 {
		return k
	}
	byKey := make(map[calsyncd.Key]calsyncd.Mapping, len(k.mappings)+len(ms))
	for _, m := range k.mappings {
		byKey[m.Key] = m
	}
	written := make(map[calsyncd.Key]bool, len(ms))
	for _, m := range ms {
		byKey[m.Key] = m
		written[m.Key] = true
	}
	out := known{mappings: make([]calsyncd.Mapping, 0, len(byKey))}
	for _, m := range byKey {
		out.mappings = append(out.mappings, m)
	}
	slices.SortFunc(out.mappings, func(a, b calsyncd.Mapping) int { return compareKeys(a.Key, b.Key) })
	for _, r := range k.rejections {
		if !written[r.Key] {
			out.rejections = append(out.rejections, r)
		}
	}
	return out
}

// drop forgets the mappings of keys.
func (k known) drop(keys ...calsyncd.Key) known {
	if len(keys) == 0 {
		return k
	}
	gone := make(map[calsyncd.Key]bool, len(keys))
	for _, key := range keys {
		gone[key] = true
	}
	out := known{rejections: k.rejections}
	for _, m := range k.mappings {
		if !gone[m.Key] {
			out.mappings = append(out.mappings, m)
		}
	}
	return out
}

// reject records rejections, replacing those of the same keys.
func (k known) reject(rs ...calsyncd.Rejection) known {
	if len(rs) == 0 {
		return k
	}
	byKey := map[calsyncd.Key]int{}
	out := known{mappings: k.mappings}
	for _, r := range append(slices.Clone(k.rejections), rs...) {
		if i, ok := byKey[r.Key]; ok {
			out.rejections[i] = r
			continue
		}
		byKey[r.Key] = len(out.rejections)
		out.rejections = append(out.rejections, r)
	}
	return out
}

// unreject forgets the rejections of keys.
func (k known) unreject(keys ...calsyncd.Key) known {
	gone := make(map[calsyncd.Key]bool, len(keys))
	for _, key := range keys {
		gone[key] = true
	}
	out := known{mappings: k.mappings}
	for _, r := range k.rejections {
		if !gone[r.Key] {
			out.rejections = append(out.rejections, r)
		}
	}
	return out
}

// rekeyed moves mappings to their new keys, as the store does: each rekey
// in turn saves the mapping under its new key (forgetting that key's
// rejection), then forgets the old key. One pass over the mappings, not
// one per rekey: a feed that mints new UIDs rekeys every event.
func (k known) rekeyed(rekeys []diff.Rekey) known {
	if len(rekeys) == 0 {
		return k
	}
	byKey := make(map[calsyncd.Key]calsyncd.Mapping, len(k.mappings)+len(rekeys))
	for _, m := range k.mappings {
		byKey[m.Key] = m
	}
	written := make(map[calsyncd.Key]bool, len(rekeys))
	for _, rk := range rekeys {
		m := rk.From
		m.Key = rk.To
		byKey[rk.To] = m
		written[rk.To] = true
		delete(byKey, rk.From.Key)
	}
	out := known{mappings: make([]calsyncd.Mapping, 0, len(byKey))}
	for _, m := range byKey {
		out.mappings = append(out.mappings, m)
	}
	slices.SortFunc(out.mappings, func(a, b calsyncd.Mapping) int { return compareKeys(a.Key, b.Key) })
	for _, r := range k.rejections {
		if !written[r.Key] {
			out.rejections = append(out.rejections, r)
		}
	}
	return out
}

// recorded is k after a batch: what the writer saved, deleted and saw
// refused, in the order the store saw it.
func (k known) recorded(res calsyncd.WriteResult) known {
	return k.put(res.Mapped...).drop(res.Unmapped...).reject(res.Rejections...)
}
