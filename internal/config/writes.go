package config

import (
	"fmt"
	"time"
)

// The values of deletes: and updates:.
const (
	// WriteMirror: Google follows the feed (the default).
	WriteMirror = "mirror"
	// WriteNever: the subscription never deletes (deletes:) or never
	// updates (updates:) an event it wrote.
	WriteNever = "never"
)

// Writes is what a subscription may do to the events it wrote, as its
// deletes: and updates: keys (or the defaults block's) say.
type Writes struct {
	// NeverDelete (deletes: never): an event that leaves the feed, is
	// excluded by a filter or cancelled stays in Google, and its mapping
	// is kept, so that its return is an update rather than a second copy.
	// Only pruning a removed subscription (sync.prune_on_remove) deletes
	// its events.
	NeverDelete bool
	// NeverUpdate (updates: never): an event, once written, is not
	// written again: the feed's later changes are ignored, and so is
	// what a person changed or deleted in Google (a reconcile repairs
	// nothing of it). New events are still created.
	NeverUpdate bool
}

// EffectiveWrites is the subscription's write policy, its own keys first,
// then the defaults block's.
func (c *Config) EffectiveWrites(s Subscription) Writes {
	p := c.EffectivePresentation(s)
	return Writes{NeverDelete: p.Deletes != nil && *p.Deletes == WriteNever, NeverUpdate: p.Updates != nil && *p.Updates == WriteNever}
}

// checkWritePolicy checks deletes: and updates: where they are written.
func checkWritePolicy(bad complaint, at string, p Presentation) {
	for _, k := range []struct {
		key string
		v   *string
		doc string
	}{
		{"deletes", p.Deletes, "never keeps in Google the events that leave the feed (add-only)"},
		{"updates", p.Updates, "never leaves an event as it was first written"},
	} {
		if k.v == nil {
			continue
		}
		switch *k.v {
		case WriteMirror, WriteNever:
		default:
			bad(at+"."+k.key, "must be mirror (the default) or never (%s), got %q", k.doc, *k.v)
		}
	}
}

// PastNow is the value of window.past that mirrors future events only:
// events that ended before the pass began are neither created, updated
// nor deleted.
const PastNow = "now"

// PastReach is how far back from now the window reaches, as the feed's
// parser and the plan read it: 0 is unbounded; past: now is the shortest
// bound there is (an event that ended before now is outside, one under
// way is inside).
func (w Window) PastReach() time.Duration {
	if w.PastNow {
		return time.Nanosecond
	}
	return w.Past.D()
}

// windowPastWarnings: window.past: 0 written out means no limit at all,
// every past event of the feed mirrored, which is often meant as the
// opposite (nothing of the past).
func (c *Config) windowPastWarnings(d *decoder) []Warning {
	var out []Warning
	check := func(at string, w Window) {
		key := at + ".past"
		if _, written := d.lines[key]; !written || w.PastNow || w.Past != 0 {
			return
		}
		out = append(out, Warning{File: d.file, Line: d.line(key), Key: key,
			Msg: fmt.Sprintf("0 means no limit: every past event of the feed is mirrored; for future events only write %q", PastNow)})
	}
	check("window", c.Window)
	for i, s := range c.Subscriptions {
		if s.Window != nil {
			check(fmt.Sprintf("subscriptions[%d].window", i), *s.Window)
		}
	}
	return out
}
