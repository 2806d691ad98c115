// Package feed turns iCalendar documents into normalised events: repaired
// syntax, resolved time zones (through package tz), unescaped text,
// canonical recurrence, and a content hash over what Google shows. It does
// no I/O (package fetch gets the bytes) and knows nothing of Google.
package feed

import (
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
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
	// Original is the original start RecurrenceID names, as the occurrences
	// of its Series are identified (midnight UTC of the date in an all-day
	// series, the instant in the series' zone otherwise); zero for a master
	// or a single event.
	Original Time

	Summary     string
	Description string
	Location    string
	URL         string
	Start       Time
	End         Time

	Status       string
	Transparency string
	Visibility   string
	// Recurrence holds RRULE, RDATE and EXDATE lines in the form Google
	// accepts (no DTSTART): what Google shows of the series.
	Recurrence []string
	// Series is the recurrence the parser read, for whoever needs its
	// occurrences: the one model of a series, so no one parses Recurrence
	// again. Recurrence is always Series.Lines(); SetSeries keeps them so.
	Series   *Series
	Sequence int

	// Hash is the content hash of what Google shows of the event (Shown),
	// so DTSTAMP, SEQUENCE and property order never change it.
	Hash string
}

// Key is the event's identity within its feed.
func (e *Event) Key() calsyncd.Key {
	return calsyncd.Key{UID: e.UID, RecurrenceID: e.RecurrenceID}
}

// IsRecurring reports whether the event is the master of a series.
func (e *Event) IsRecurring() bool { return len(e.Recurrence) > 0 }

// SetSeries makes the event the master of s (nil: no series), its
// Recurrence lines rendered from it.
func (e *Event) SetSeries(s *Series) {
	e.Series, e.Recurrence = s, nil
	if s != nil {
		e.Recurrence = s.Lines()
	}
}
