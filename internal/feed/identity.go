package feed

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// identityHash hashes what an event is rather than how it is described:
// title, start, end and recurrence. It names events that have no UID and,
// with IdentityContent, every event, so a description edit updates the
// Google event in place instead of replacing it.
func (e *Event) identityHash() string {
	h := sha256.New()
	w := func(s string) {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	w("id1")
	w(e.Summary)
	for _, t := range []Time{e.Start, e.End} {
		if t.AllDay {
			w("D" + t.Date())
		} else {
			w("T" + strconv.FormatInt(t.T.Unix(), 10) + "@" + t.Zone)
		}
	}
	rec := slices.Clone(e.Recurrence)
	slices.Sort(rec)
	for _, r := range rec {
		w(r)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// contentIdentity re-keys events by content: every event of one UID (a
// master and its overrides) takes "content-" and the identity hash of the
// master (or, lacking one, of its first override). Series with the same
// identity are numbered in content order.
func contentIdentity(events []Event, ss []*series) ([]Event, []*series) {
	type group struct {
		uid, id, hash string
	}
	groups := map[string]*group{}
	for i := range events {
		ev := &events[i]
		g, ok := groups[ev.UID]
		if !ok {
			g = &group{uid: ev.UID}
			groups[ev.UID] = g
		}
		// Events come sorted by key, so the master (empty RECURRENCE-ID)
		// comes first.
		if g.id == "" {
			id := ev.identityHash()
			if ev.RecurrenceID != "" {
				id = ev.RecurrenceID + id
			}
			g.id, g.hash = "content-"+hashPrefix(id), ev.ComputeHash()
		}
	}
	byID := map[string][]*group{}
	for _, g := range groups {
		byID[g.id] = append(byID[g.id], g)
	}
	newUID := map[string]string{}
	for id, gs := range byID {
		slices.SortFunc(gs, func(a, b *group) int {
			if c := strings.Compare(a.hash, b.hash); c != 0 {
				return c
			}
			return strings.Compare(a.uid, b.uid)
		})
		for n, g := range gs {
			newUID[g.uid] = id
			if n > 0 {
				newUID[g.uid] = fmt.Sprintf("%s-%d", id, n+1)
			}
		}
	}
	for i := range events {
		events[i].UID = newUID[events[i].UID]
	}
	return sortedByKey(events, ss)
}

// sortedByKey returns events sorted by key, and their series with them,
// in new slices.
func sortedByKey(events []Event, ss []*series) ([]Event, []*series) {
	idx := make([]int, len(events))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := strings.Compare(events[a].UID, events[b].UID); c != 0 {
			return c
		}
		return strings.Compare(events[a].RecurrenceID, events[b].RecurrenceID)
	})
	outE := make([]Event, len(events))
	outS := make([]*series, len(events))
	for n, i := range idx {
		outE[n], outS[n] = events[i], ss[i]
	}
	return outE, outS
}

func hashPrefix(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:12])
}
