// Package feed fetches iCalendar feeds and turns them into normalised
// events: resolved time zones, unescaped text, canonical recurrence, and a
// content hash over what Google shows. It knows nothing of Google.
package feed

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"time"

	"github.com/calsyncd/calsyncd/internal/mapping"
)

// Time is an event boundary.
type Time struct {
	// AllDay boundaries carry a date only; T is midnight UTC of that date.
	AllDay bool
	// T is the instant of a timed boundary, in Zone's location.
	T time.Time
	// Zone is the IANA zone name the event was written in ("" when the
	// source gave UTC or the zone could not be resolved to a name).
	Zone string
}

// Date is the boundary's calendar date as Google writes it.
func (t Time) Date() string { return t.T.Format("2006-01-02") }

// IsZero reports whether the boundary is unset.
func (t Time) IsZero() bool { return t.T.IsZero() }

// Event statuses, transparencies and visibilities, in Google's vocabulary.
const (
	StatusConfirmed = "confirmed"
	StatusTentative = "tentative"
	StatusCancelled = "cancelled"

	TransparencyOpaque      = "opaque"
	TransparencyTransparent = "transparent"

	VisibilityDefault      = "default"
	VisibilityPublic       = "public"
	VisibilityPrivate      = "private"
	VisibilityConfidential = "confidential"
)

// Event is one normalised VEVENT: a single event, the master of a recurring
// series, or an overridden instance (RecurrenceID set).
type Event struct {
	UID string
	// RecurrenceID identifies an overridden instance of a recurring event,
	// canonical as UTC "20060102T150405Z" or a date "20060102".
	RecurrenceID string
	// ThisAndFuture is set when the override has RANGE=THISANDFUTURE.
	ThisAndFuture bool

	Summary     string
	Description string
	Location    string
	URL         string
	Start       Time
	End         Time

	Status       string
	Transparency string
	Visibility   string
	// Recurrence holds RRULE, EXRULE, RDATE and EXDATE lines in the form
	// Google accepts (no DTSTART).
	Recurrence []string
	Sequence   int

	// Hash is a content hash over every field that changes what Google
	// shows (not DTSTAMP, SEQUENCE or property order).
	Hash string
}

// Key is the event's identity within its feed.
func (e *Event) Key() mapping.Key {
	return mapping.Key{UID: e.UID, RecurrenceID: e.RecurrenceID}
}

// IsRecurring reports whether the event is the master of a series.
func (e *Event) IsRecurring() bool { return len(e.Recurrence) > 0 }

// hashVersion changes whenever what we write to Google changes, so that every
// mirrored event is rewritten once.
const hashVersion = "h1"

// ComputeHash returns the content hash of e.
func (e *Event) ComputeHash() string {
	// The fields go into one buffer, each as "<length>:<field>", hashed
	// at once.
	var stack [1024]byte
	buf := stack[:0]
	if n := len(e.Summary) + len(e.Description) + len(e.Location) + len(e.URL) + 200; n > len(stack) {
		buf = make([]byte, 0, n+64*len(e.Recurrence))
	}
	w := func(s string) {
		buf = strconv.AppendInt(buf, int64(len(s)), 10)
		buf = append(buf, ':')
		buf = append(buf, s...)
	}
	w(hashVersion)
	w(e.Summary)
	w(e.Description)
	w(e.Location)
	w(e.URL)
	for _, t := range [2]Time{e.Start, e.End} {
		var piece [64]byte
		p := piece[:0]
		if t.AllDay {
			p = t.T.AppendFormat(append(p, 'D'), "2006-01-02")
		} else {
			p = strconv.AppendInt(append(p, 'T'), t.T.Unix(), 10)
			p = append(append(p, '@'), t.Zone...)
		}
		buf = strconv.AppendInt(buf, int64(len(p)), 10)
		buf = append(buf, ':')
		buf = append(buf, p...)
	}
	w(e.Status)
	w(e.Transparency)
	w(e.Visibility)
	if e.ThisAndFuture {
		w("thisandfuture")
	}
	rec := e.Recurrence
	if !slices.IsSorted(rec) {
		rec = slices.Sorted(slices.Values(rec))
	}
	for _, r := range rec {
		w(r)
	}
	sum := sha256.Sum256(buf)
	var out [32]byte
	hex.Encode(out[:], sum[:16])
	return string(out[:])
}
