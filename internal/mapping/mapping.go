// Package mapping holds the link between a feed event and the Google event
// that mirrors it: the key that identifies an event in a feed, the record we
// persist for it, and the deterministic Google event ids derived from the key.
package mapping

import (
	"crypto/sha256"
	"encoding/base32"
	"strconv"
	"strings"
	"time"
)

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

// Mapping is what we remember about one feed event we wrote to Google.
type Mapping struct {
	Key Key
	// EventID is the Google event id (ours for masters and single events;
	// Google's instance id for overridden instances).
	EventID string
	// Generation is bumped when Google refuses to let us reuse an id (the
	// person emptied the bin after deleting our event).
	Generation int
	// Hash is the content hash of the feed event as last written.
	Hash string
	// ETag is the Google etag of the event as we last wrote it; updates send
	// it as If-Match so a person's edits are noticed.
	ETag string
	// EndsAt is when the event ends (zero for a recurring series or when
	// unknown): an event that ended before the window and then left the
	// feed is history, not a deletion.
	EndsAt    time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Rejection is a feed event Google refused (HTTP 400 and the like). It is not
// retried until its content changes.
type Rejection struct {
	Key    Key
	Hash   string
	Reason string
	At     time.Time
}

var idEncoding = base32.HexEncoding.WithPadding(base32.NoPadding)

// EventID derives the Google event id of a feed event. Google accepts client
// ids of 5-1024 characters from base32hex (a-v, 0-9) and guarantees an insert
// with a client id succeeds only if no event has that id, so a repeated insert
// answers 409 instead of creating a twin. The id depends only on the
// subscription, the key and the generation, so a lost database or a lost
// response never leads to a duplicate.
func EventID(subscriptionID string, k Key, generation int) string {
	h := sha256.New()
	h.Write([]byte("calsyncd/v1\x00"))
	h.Write([]byte(subscriptionID))
	h.Write([]byte{0})
	h.Write([]byte(k.UID))
	h.Write([]byte{0})
	h.Write([]byte(k.RecurrenceID))
	if generation > 0 {
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(generation)))
	}
	return "cs" + strings.ToLower(idEncoding.EncodeToString(h.Sum(nil)))
}

// ValidEventID reports whether id is acceptable to Google as a client id.
func ValidEventID(id string) bool {
	if len(id) < 5 || len(id) > 1024 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'v') {
			return false
		}
	}
	return true
}
