package calsyncd

import "strings"

// Key identifies one event of one feed: its UID and, for an overridden
// instance of a recurring event, its RECURRENCE-ID in canonical form
// (UTC "20060102T150405Z" or a date "20060102"). Masters and single events
// have an empty RecurrenceID.
type Key struct {
	UID          string
	RecurrenceID string
}

func (k Key) String() string {
	if k.RecurrenceID == "" {
		return k.UID
	}
	return k.UID + "@" + k.RecurrenceID
}

// Kind is what Google holds for a key. The kind is part of the key (the
// form of its RecurrenceID), so that an occurrence that changes how Google
// holds it gets a new key: a delete of the old shape and a create of the new
// one, never an update of an event of another shape.
type Kind int

// Kinds of keyed events.
const (
	// Top: a single event or the master of a recurring series
	// (RecurrenceID "").
	Top Kind = iota
	// Instance: an exception of a recurring series held by Google (a moved,
	// retitled or cancelled occurrence). Its Google id is the instance id
	// Google gave it. RecurrenceID is the instance's original start
	// ("20060102T150405Z" or "20060102"), prefixed with its series'
	// RecurrenceID and "/" when the series was split off (Split).
	Instance
	// Split: a recurring series split off its master at a RANGE=THISANDFUTURE
	// override ("<rid>/series").
	Split
	// Standalone: one occurrence written as a single event of its own
	// ("<rid>/single"): an override whose series Google does not hold, or
	// an occurrence of a series Google cannot hold as recurring.
	Standalone
)

const (
	splitSuffix      = "/series"
	standaloneSuffix = "/single"
)

// SplitKey is the key of the series split off uid's master at the feed
// recurrence id rid.
func SplitKey(uid, rid string) Key { return Key{UID: uid, RecurrenceID: rid + splitSuffix} }

// StandaloneKey is the key of uid's occurrence rid written as a single event.
func StandaloneKey(uid, rid string) Key { return Key{UID: uid, RecurrenceID: rid + standaloneSuffix} }

// InstanceKey is the key of the exception at original start start of the
// series parent (a Top or Split key).
func InstanceKey(parent Key, start string) Key {
	if parent.RecurrenceID == "" {
		return Key{UID: parent.UID, RecurrenceID: start}
	}
	return Key{UID: parent.UID, RecurrenceID: parent.RecurrenceID + "/" + start}
}

// Kind is how Google holds the keyed event.
func (k Key) Kind() Kind {
	switch r := k.RecurrenceID; {
	case r == "":
		return Top
	case strings.HasSuffix(r, splitSuffix):
		return Split
	case strings.HasSuffix(r, standaloneSuffix):
		return Standalone
	}
	return Instance
}

// Parent is the key of an Instance's series; ok is false for other kinds.
func (k Key) Parent() (Key, bool) {
	if k.Kind() != Instance {
		return Key{}, false
	}
	if i := strings.LastIndexByte(k.RecurrenceID, '/'); i >= 0 {
		return Key{UID: k.UID, RecurrenceID: k.RecurrenceID[:i]}, true
	}
	return Key{UID: k.UID}, true
}

// Start is the recurrence id an Instance, Split or Standalone key names:
// an Instance's original start in its series, the feed's RECURRENCE-ID of
// a Split or Standalone. It is "" for a Top key.
func (k Key) Start() string {
	r := k.RecurrenceID
	switch k.Kind() {
	case Split:
		return strings.TrimSuffix(r, splitSuffix)
	case Standalone:
		return strings.TrimSuffix(r, standaloneSuffix)
	case Instance:
		if i := strings.LastIndexByte(r, '/'); i >= 0 {
			return r[i+1:]
		}
	}
	return r
}
