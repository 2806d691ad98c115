package diff

import (
	"cmp"
	"slices"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/feed"
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
	// Instance: Google holds it as an exception of a recurring event (it
	// has a recurringEventId); Original is its original start as a
	// canonical recurrence id (feed.CanonicalRecurrenceID).
	Instance bool
	Original string
	// Content is Google's copy of the event, asked whether it still shows
	// what a feed event would write (nil: unknown, never drift).
	Content Content
}

// Content is Google's copy of an owned event, as far as drift goes. The
// writer, which owns the conversion to Google's form, answers: only the
// fields we write count, never a person's own (their reminders and colour,
// unless the subscription sets them).
type Content interface {
	Shows(ev *feed.Event) bool
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
	// Edited are instances of our series that a person edited by hand
	// (moved, retitled, deleted): Google made them exceptions that carry
	// the series' marks. They are never duplicates of the series; their
	// mapping (hash and id unknown) makes the plan write each back to its
	// series' occurrence, as it reverts an override that left the feed,
	// finding the instance by its original start.
	Edited []calsyncd.Mapping
}

// Reconcile compares the events we own in Google with our mappings. It is
// pure: the caller lists the owned events and applies the repair.
//
// Instance exceptions of recurring events are not refreshed when missing:
// Google does not promise that a cancelled instance keeps our marks, so its
// absence from the listing proves nothing. An exception listed with the
// series' marks and no recurrence id of ours is an instance a person
// edited or deleted (Edited), never a duplicate of its series. Split-off series and standalone
// occurrences are events of their own, refreshed like any other.
func Reconcile(owner calsyncd.Owner, subscriptionID string, mapped []calsyncd.Mapping, owned []Owned) Repair {
	var r Repair
	have := make(map[calsyncd.Key]calsyncd.Mapping, len(mapped))
	mappedIDs := make(map[string]bool, len(mapped))
	for _, m := range mapped {
		have[m.Key] = m
		mappedIDs[m.EventID] = true
	}
	live, liveIDs := r.sortOwned(owned, have, mappedIDs)
	keys := make([]calsyncd.Key, 0, len(live))
	for k := range live {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	for _, k := range keys {
		m, hasMapping := have[k]
		r.keepOne(owner, subscriptionID, k, live[k], m, hasMapping)
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

// sortOwned sorts the events we own: a hand-edited instance no mapping
// knows is noted in r.Edited; the live copies of each key that are not
// mapped under another key are returned by key, and liveIDs are the event
// ids of every live event.
func (r *Repair) sortOwned(owned []Owned, have map[calsyncd.Key]calsyncd.Mapping, mappedIDs map[string]bool) (live map[calsyncd.Key][]Owned, liveIDs map[string]bool) {
	live, liveIDs = map[calsyncd.Key][]Owned{}, map[string]bool{}
	for _, o := range owned {
		if !o.Cancelled {
			liveIDs[o.EventID] = true
		}
		if handEdited(o) {
			if ik := instanceKey(o); !mappedIDs[o.EventID] && have[ik].EventID == "" {
				r.Edited = append(r.Edited, calsyncd.Mapping{Key: ik})
			}
			continue
		}
		// An event already mapped under another key (it was rekeyed when
		// its feed changed its UID) is not a stray to adopt.
		if !o.Cancelled && (!mappedIDs[o.EventID] || have[o.Key].EventID == o.EventID) {
			live[o.Key] = append(live[o.Key], o)
		}
	}
	return live, liveIDs
}

// keepOne keeps one of the live copies of key k, the mapped one if any,
// else the best, which is adopted; the others are duplicates to delete.
func (r *Repair) keepOne(owner calsyncd.Owner, subscriptionID string, k calsyncd.Key, copies []Owned, m calsyncd.Mapping, hasMapping bool) {
	keep := -1
	if hasMapping {
		for i, o := range copies {
			if o.EventID == m.EventID {
				keep = i
			}
		}
	}
	if keep < 0 {
		keep = bestCopy(owner, subscriptionID, copies)
		o := copies[keep]
		r.Adopt = append(r.Adopt, calsyncd.Mapping{Key: k, EventID: o.EventID, Generation: max(0, generationOf(owner, subscriptionID, o)),
			Hash: o.Hash, ETag: o.ETag})
	}
	for i, o := range copies {
		if i != keep {
			dup := calsyncd.Mapping{Key: k, EventID: o.EventID}
			r.Duplicates = append(r.Duplicates, Op{Kind: Delete, Key: k, Mapping: &dup})
		}
	}
}

// bestCopy picks the copy to keep: one with our deterministic id (highest
// generation), else the most recently updated, else the smallest id.
func bestCopy(owner calsyncd.Owner, subscriptionID string, copies []Owned) int {
	best := 0
	for i := 1; i < len(copies); i++ {
		a, b := copies[i], copies[best]
		ga, gb := generationOf(owner, subscriptionID, a), generationOf(owner, subscriptionID, b)
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

// generationOf finds which id generation an owned event's id is (under
// any of the owner's names), or -1.
func generationOf(owner calsyncd.Owner, subscriptionID string, o Owned) int {
	for g := maxGeneration; g >= 0; g-- {
		if mapping.Derived(owner, subscriptionID, o.Key, g, o.EventID) {
			return g
		}
	}
	return -1
}

func compareKeys(a, b calsyncd.Key) int {
	return cmp.Or(cmp.Compare(a.UID, b.UID), cmp.Compare(a.RecurrenceID, b.RecurrenceID))
}

// handEdited: an exception Google made of an instance of our series when a
// person edited it; it carries the series' marks, with no recurrence id of
// ours (the exceptions we write carry theirs).
func handEdited(o Owned) bool {
	return o.Instance && o.Key.Kind() == calsyncd.Top && o.Original != ""
}

func instanceKey(o Owned) calsyncd.Key {
	return calsyncd.Key{UID: o.Key.UID, RecurrenceID: o.Original}
}

// Drifted lists the mapped events whose copy in Google no longer shows what
// the feed's event would write, although the plan would leave them alone
// (the hash we wrote is the feed's): a person edited one of the fields we
// write by hand. The caller clears their hash, and the plan writes them
// back to the feed's version (the writer's If-Match and personal fields
// keep a person's reminders and colour). Events we do not own are never
// listed; cancelled ones are not compared.
func Drifted(desired []feed.Event, mapped []calsyncd.Mapping, owned []Owned) []calsyncd.Key {
	byID := make(map[string]*Owned, len(owned))
	for i := range owned {
		if o := &owned[i]; !o.Cancelled && o.Content != nil {
			byID[o.EventID] = o
		}
	}
	have := make(map[calsyncd.Key]*calsyncd.Mapping, len(mapped))
	for i := range mapped {
		have[mapped[i].Key] = &mapped[i]
	}
	var out []calsyncd.Key
	seen := map[calsyncd.Key]bool{}
	series := map[calsyncd.Key]bool{} // drifted series
	var exceptions []*feed.Event
	for _, ev := range comparedEvents(desired, mapped) {
		k := ev.Key()
		if seen[k] || ev.Status == feed.StatusCancelled {
			continue
		}
		seen[k] = true
		m := have[k]
		if m == nil || m.Hash == "" || m.Hash != ev.Hash {
			continue
		}
		if k.Kind() == calsyncd.Instance {
			exceptions = append(exceptions, ev)
		}
		if o := byID[m.EventID]; o != nil && !o.Content.Shows(ev) {
			out = append(out, k)
			series[k] = true
		}
	}
	// A series a person edited may have taken its exceptions along (Google
	// does not say whether an update keeps them): those of a drifted
	// series that Google no longer shows as we wrote them are written
	// again. Elsewhere an exception missing from the listing proves
	// nothing.
	for _, ev := range exceptions {
		k := ev.Key()
		pk, _ := k.Parent()
		if !series[pk] || series[k] {
			continue
		}
		if o := byID[have[k].EventID]; o == nil || !o.Content.Shows(ev) {
			out = append(out, k)
		}
	}
	return out
}

// comparedEvents is what the plan compares each mapping with: the feed's
// event, or for an instance written back to its series (an override that
// left the feed, an instance a person edited) the series' occurrence.
func comparedEvents(desired []feed.Event, mapped []calsyncd.Mapping) []*feed.Event {
	byKey := make(map[calsyncd.Key]*feed.Event, len(desired))
	for i := range desired {
		if k := desired[i].Key(); byKey[k] == nil {
			byKey[k] = &desired[i]
		}
	}
	want := make([]*feed.Event, 0, len(desired))
	for i := range desired {
		want = append(want, &desired[i])
	}
	for i := range mapped {
		if k := mapped[i].Key; byKey[k] == nil {
			if rev := revertOf(k, byKey); rev != nil {
				want = append(want, rev)
			}
		}
	}
	return want
}
