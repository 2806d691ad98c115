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
