package diff

import (
	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// UIDChurn is what DetectUnstableUIDs saw.
type UIDChurn struct {
	// New counts desired events whose key we have never mapped.
	New int
	// Twins counts new events whose content hash equals that of a mapped
	// event that left the feed: the same event under a new UID.
	Twins int
	// Unstable is set when most of the feed came back under new UIDs with
	// unchanged content: the server mints UIDs on every fetch, and naive
	// mirroring would delete and recreate everything. The subscription
	// should use identity: content.
	Unstable bool
}

// Thresholds of DetectUnstableUIDs.
const (
	// unstableMinEvents keeps a tiny feed's churn from looking like a pattern.
	unstableMinEvents = 3
)

// DetectUnstableUIDs compares the events a feed offers now with what we
// mapped before. Content hashes ignore the UID, so an event that only
// changed its UID has a twin among the mappings that left the feed. It
// reports Unstable when more than half the feed is new and at least four
// in five of the new events are such twins.
func DetectUnstableUIDs(desired []feed.Event, mapped []calsyncd.Mapping) UIDChurn {
	var c UIDChurn
	if len(desired) < unstableMinEvents || len(mapped) < unstableMinEvents {
		return c
	}
	want := make(map[calsyncd.Key]bool, len(desired))
	for i := range desired {
		want[desired[i].Key()] = true
	}
	have := make(map[calsyncd.Key]bool, len(mapped))
	gone := map[string]int{} // content hash -> mapped events that left
	for _, m := range mapped {
		have[m.Key] = true
		if !want[m.Key] {
			gone[m.Hash]++
		}
	}
	for i := range desired {
		ev := &desired[i]
		if have[ev.Key()] {
			continue
		}
		c.New++
		if gone[ev.Hash] > 0 {
			gone[ev.Hash]--
			c.Twins++
		}
	}
	c.Unstable = c.New*2 > len(desired) && c.Twins*5 >= c.New*4
	return c
}
