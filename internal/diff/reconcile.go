package diff

import (
	"cmp"
	"slices"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/mapping"
)

// maxGeneration bounds the search for an owned event's id generation.
const maxGeneration = 16

// Owned is an event found in Google that carries our ownership marks.
type Owned struct {
	Key     calsyncd.Key
	EventID string
	// Hash is the content hash we stamped on the event when we wrote it.
	Hash      string
	ETag      string
	Cancelled bool
	Updated   time.Time
}

// Repair is what reconciling Google with our mappings found.
type Repair struct {
	// Adopt are owned events we had no (valid) mapping for, e.g. after the
	// database was lost: they become mappings, and the ordinary plan then
	// updates or deletes them (deletes subject to the mass-delete guard).
	Adopt []calsyncd.Mapping
	// Refresh are mappings whose event is gone from Google (deleted by
	// hand): their hash is cleared so the plan rewrites, and so restores,
	// them.
	Refresh []calsyncd.Mapping
	// Duplicates are extra copies of one feed event; they are deleted
	// without touching the mapping of the copy we keep.
	Duplicates []Op
}

// Empty reports whether there is nothing to repair.
func (r Repair) Empty() bool {
	return len(r.Adopt) == 0 && len(r.Refresh) == 0 && len(r.Duplicates) == 0
}

// Reconcile compares the events we own in Google with our mappings. It is
// pure: the caller lists the owned events and applies the repair.
//
// Instance exceptions of recurring events are not refreshed when missing:
// Google does not promise that a cancelled instance keeps our marks, so its
// absence from the listing proves nothing. Split-off series and standalone
// occurrences are events of their own, refreshed like any other.
func Reconcile(subscriptionID string, mapped []calsyncd.Mapping, owned []Owned) Repair {
	var r Repair
	have := make(map[calsyncd.Key]calsyncd.Mapping, len(mapped))
	mappedIDs := make(map[string]bool, len(mapped))
	for _, m := range mapped {
		have[m.Key] = m
		mappedIDs[m.EventID] = true
	}
	live := map[calsyncd.Key][]Owned{}
	liveIDs := map[string]bool{}
	for _, o := range owned {
		if !o.Cancelled {
			liveIDs[o.EventID] = true
		}
		// An event already mapped under another key (it was rekeyed when
		// its feed changed its UID) is not a stray to adopt.
		if !o.Cancelled && (!mappedIDs[o.EventID] || have[o.Key].EventID == o.EventID) {
			live[o.Key] = append(live[o.Key], o)
		}
	}
	keys := make([]calsyncd.Key, 0, len(live))
	for k := range live {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	for _, k := range keys {
		copies := live[k]
		m, hasMapping := have[k]
		keep := -1
		if hasMapping {
			for i, o := range copies {
				if o.EventID == m.EventID {
					keep = i
				}
			}
		}
		if keep < 0 {
			keep = bestCopy(subscriptionID, copies)
			o := copies[keep]
			r.Adopt = append(r.Adopt, calsyncd.Mapping{Key: k, EventID: o.EventID, Generation: max(0, generationOf(subscriptionID, o)),
				Hash: o.Hash, ETag: o.ETag})
		}
		for i, o := range copies {
			if i != keep {
				dup := calsyncd.Mapping{Key: k, EventID: o.EventID}
				r.Duplicates = append(r.Duplicates, Op{Kind: Delete, Key: k, Mapping: &dup})
			}
		}
	}
	for _, m := range mapped {
		if len(live[m.Key]) > 0 || liveIDs[m.EventID] || m.Key.Kind() == calsyncd.Instance {
			continue
		}
		m.Hash, m.ETag = "", ""
		r.Refresh = append(r.Refresh, m)
	}
	return r
}

// bestCopy picks the copy to keep: one with our deterministic id (highest
// generation), else the most recently updated, else the smallest id.
func bestCopy(subscriptionID string, copies []Owned) int {
	best := 0
	for i := 1; i < len(copies); i++ {
		a, b := copies[i], copies[best]
		ga, gb := generationOf(subscriptionID, a), generationOf(subscriptionID, b)
		switch {
		case ga != gb:
			if ga > gb {
				best = i
			}
		case !a.Updated.Equal(b.Updated):
			if a.Updated.After(b.Updated) {
				best = i
			}
		case a.EventID < b.EventID:
			best = i
		}
	}
	return best
}

// generationOf finds which id generation an owned event's id is, or -1.
func generationOf(subscriptionID string, o Owned) int {
	for g := maxGeneration; g >= 0; g-- {
		if mapping.EventID(subscriptionID, o.Key, g) == o.EventID {
			return g
		}
	}
	return -1
}

func compareKeys(a, b calsyncd.Key) int {
	return cmp.Or(cmp.Compare(a.UID, b.UID), cmp.Compare(a.RecurrenceID, b.RecurrenceID))
}
