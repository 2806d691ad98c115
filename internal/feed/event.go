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

	// Details is what the feed says of the event beyond what Google shows,
	// for a subscription's filters and reminders; nil when it says none of
	// it.
	Details *Details
	// Style is how a subscription presents the event beyond the feed's
	// text (colour, reminders), set by the render stage; nil when the
	// subscription sets neither.
	Style *Style

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

// Details are the feed's categories, an unusual CLASS and its alarms.
type Details struct {
	// Categories are CATEGORIES' values, in feed order, trimmed.
	Categories []string
	// Class is CLASS when it is none of PUBLIC, PRIVATE and CONFIDENTIAL
	// (Visibility says those), upper-cased; the event's Visibility is then
	// private (RFC 5545 §3.8.1.3).
	Class string
	// Alarms are the VALARMs with a relative trigger, as Google's
	// reminders can hold them.
	Alarms []Alarm
	// AbsoluteAlarms counts the VALARMs with an absolute trigger (a date
	// and time): Google's reminders are relative, so they are skipped.
	AbsoluteAlarms int
}

// Alarm is a VALARM with a relative trigger.
type Alarm struct {
	// Action is DISPLAY, AUDIO, EMAIL or another value, upper-cased.
	Action string
	// Before is how long before the event's start it rings (negative:
	// after the start), whether the trigger was related to the start or
	// the end.
	Before time.Duration
}

// Style is what a subscription adds to what Google shows.
type Style struct {
	// ColorID is Google's event colour, "1" to "11" ("" leaves it alone).
	ColorID string
	// Reminders are the event's reminders (nil leaves them alone).
	Reminders *Reminders
}

// Reminders are an event's reminders, in Google's terms: the calendar's
// default ones, or the overrides (none at all when UseDefault is false and
// there are no overrides).
type Reminders struct {
	UseDefault bool
	Overrides  []Reminder
}

// Reminder is one of Google's reminder overrides.
type Reminder struct {
	Method  string // popup or email
	Minutes int    // before the start
}

// Categories are the event's categories (none: nil).
func (e *Event) Categories() []string {
	if e.Details == nil {
		return nil
	}
	return e.Details.Categories
}
