package feed

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	ical "github.com/arran4/golang-ical"
	"github.com/calsyncd/calsyncd/internal/tz"
)

// series is what duplicate resolution and recurrence-id alignment need
// beyond the Event (the recurrence itself is Event.Series).
type series struct {
	lastModified time.Time
	stamp        time.Time
	// ridWall is the RECURRENCE-ID's wall clock, for aligning its type
	// with the master's.
	ridWall time.Time
	// rare is what few events have (nil for the others: every event
	// has a series, so its size counts).
	rare *rareSeries
}

// rareSeries is what only unusual events need of their series.
type rareSeries struct {
	// own is the series of an instance that carries recurrence lines
	// (RRULE or RDATE beside its RECURRENCE-ID), nil otherwise.
	own *Series
	// periods are the occurrences an RDATE PERIOD gives their own end.
	periods []period
}

func (s *series) own() *Series {
	if s.rare == nil {
		return nil
	}
	return s.rare.own
}

func (s *series) periods() []period {
	if s.rare == nil {
		return nil
	}
	return s.rare.periods
}

// period is an RDATE PERIOD's occurrence: its start and its own end.
type period struct{ start, end time.Time }

// normalise reads a VEVENT's sorted properties as an Event: what it
// says, when it is, and its recurrence.
func (p *parser) normalise(r *rawEvent) (Event, *series, error) {
	var ev Event
	class := describe(&ev, r)
	s := &series{lastModified: stampOf(r.single[pLastModified]), stamp: stampOf(r.single[pDTStamp])}
	if err := p.setTimes(&ev, s, r); err != nil {
		return ev, nil, err
	}
	if err := p.setSeries(&ev, s, r); err != nil {
		return ev, nil, err
	}
	if class != "" || len(r.categories) > 0 || len(r.subs) > 0 {
		ev.Details = details(&ev, r, class)
	}
	return ev, s, nil
}

// describe sets what the event says of itself: its UID, text, status,
// transparency and visibility. class is a CLASS calsyncd does not know,
// "" for the others.
func describe(ev *Event, r *rawEvent) (class string) {
	*ev = Event{
		UID:          r.uid,
		Summary:      r.text(pSummary),
		Description:  r.text(pDescription),
		Location:     r.text(pLocation),
		Status:       statusOf(r.text(pStatus)),
		Transparency: TransparencyOpaque,
	}
	if u := r.single[pURL]; u != nil {
		ev.URL = strings.TrimSpace(ical.FromText(r.charset.text(u.Value)))
	}
	if q := r.single[pSequence]; q != nil {
		ev.Sequence, _ = strconv.Atoi(strings.TrimSpace(q.Value))
	}
	if strings.EqualFold(strings.TrimSpace(r.text(pTransp)), "TRANSPARENT") {
		ev.Transparency = TransparencyTransparent
	}
	ev.Visibility, class = visibilityOf(r.text(pClass))
	return class
}

func statusOf(v string) string {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "CANCELLED", "CANCELED":
		return StatusCancelled
	case "TENTATIVE":
		return StatusTentative
	}
	return StatusConfirmed
}

// visibilityOf reads a CLASS; class is the value when calsyncd does not
// know it.
func visibilityOf(v string) (visibility, class string) {
	switch c := strings.ToUpper(strings.TrimSpace(v)); c {
	case "PUBLIC":
		return VisibilityPublic, ""
	case "PRIVATE":
		return VisibilityPrivate, ""
	case "CONFIDENTIAL":
		return VisibilityConfidential, ""
	case "":
		return VisibilityDefault, ""
	default:
		// An x-name or an iana-token we do not know: RFC 5545 §3.8.1.3
		// has it treated as PRIVATE. Details keeps the value for filters.
		return VisibilityPrivate, c
	}
}

// setTimes reads DTSTART, the end and the RECURRENCE-ID.
func (p *parser) setTimes(ev *Event, s *series, r *rawEvent) error {
	start := r.single[pDTStart]
	if start == nil {
		return errors.New("no DTSTART")
	}
	var err error
	if ev.Start, _, err = p.parseTime(start, ev.UID); err != nil {
		return fmt.Errorf("DTSTART: %w", err)
	}
	if err := p.setEnd(ev, r); err != nil {
		return err
	}
	if rid := r.single[pRecurrenceID]; rid != nil {
		t, wall, err := p.parseTime(rid, ev.UID)
		if err != nil {
			return fmt.Errorf("RECURRENCE-ID: %w", err)
		}
		ev.RecurrenceID, ev.Original = CanonicalRecurrenceID(t), t
		s.ridWall = wall
		ev.ThisAndFuture = strings.EqualFold(param(rid, "RANGE"), "THISANDFUTURE")
	}
	return nil
}

// setSeries reads the recurrence and the RDATE PERIODs' own ends.
func (p *parser) setSeries(ev *Event, s *series, r *rawEvent) error {
	if ev.RecurrenceID != "" && (len(r.rrules) > 0 || len(r.rdate) > 0) {
		// An instance with recurrence lines of its own (some exporters
		// write the master so): its series is read and kept aside;
		// settleKeys makes the component the master when its UID has
		// none, and ignores the lines otherwise.
		rid, orig, taf := ev.RecurrenceID, ev.Original, ev.ThisAndFuture
		ev.RecurrenceID, ev.Original, ev.ThisAndFuture = "", Time{}, false
		if err := p.recurrence(ev, r); err != nil {
			return err
		}
		if ev.Series != nil {
			s.rare = &rareSeries{own: ev.Series}
		}
		ev.SetSeries(nil)
		ev.RecurrenceID, ev.Original, ev.ThisAndFuture = rid, orig, taf
	} else if err := p.recurrence(ev, r); err != nil {
		return err
	}
	if len(r.periods) > 0 && (ev.Series != nil || s.own() != nil) {
		if s.rare == nil {
			s.rare = &rareSeries{}
		}
		s.rare.periods = slices.Clone(r.periods)
	}
	return nil
}

// stampOf reads a LAST-MODIFIED or DTSTAMP (zero when absent or bad).
func stampOf(pr *ical.IANAProperty) time.Time {
	if pr == nil {
		return time.Time{}
	}
	t, _, _ := parseICalTime(strings.TrimSuffix(strings.TrimSpace(pr.Value), "Z"))
	return t
}

// setEnd derives the end from DTEND, DURATION or, lacking both, RFC 5545's
// defaults: one day for an all-day event, zero length for a timed one.
func (p *parser) setEnd(ev *Event, r *rawEvent) error {
	switch {
	case r.single[pDTEnd] != nil:
		end, wall, err := p.parseTime(r.single[pDTEnd], ev.UID)
		if err != nil {
			return fmt.Errorf("DTEND: %w", err)
		}
		switch {
		case ev.Start.AllDay && !end.AllDay:
			// A timed end on an all-day start: the day it falls in counts.
			d := time.Date(wall.Year(), wall.Month(), wall.Day(), 0, 0, 0, 0, time.UTC)
			if wall.Hour() != 0 || wall.Minute() != 0 || wall.Second() != 0 {
				d = d.AddDate(0, 0, 1)
			}
			end = Time{AllDay: true, T: d}
		case !ev.Start.AllDay && end.AllDay:
			loc := ev.Start.T.Location()
			end = Time{T: tz.At(time.Date(end.T.Year(), end.T.Month(), end.T.Day(), 0, 0, 0, 0, time.UTC), loc), Zone: ev.Start.Zone}
		}
		ev.End = end
	case r.single[pDuration] != nil:
		d, err := ParseDuration(r.single[pDuration].Value)
		if err != nil {
			return fmt.Errorf("DURATION: %w", err)
		}
		ev.End = ev.Start
		if ev.Start.AllDay {
			days := d.Days + int((d.Exact+24*time.Hour-1)/(24*time.Hour))
			ev.End.T = ev.Start.T.AddDate(0, 0, days)
		} else {
			ev.End.T = addDuration(ev.Start.T, d)
		}
	case ev.Start.AllDay:
		ev.End = Time{AllDay: true, T: ev.Start.T.AddDate(0, 0, 1)}
	default:
		ev.End = ev.Start
	}
	if ev.Start.AllDay && !ev.End.T.After(ev.Start.T) {
		// Google refuses an all-day event that ends where it starts.
		ev.End = Time{AllDay: true, T: ev.Start.T.AddDate(0, 0, 1)}
	}
	if ev.End.T.Before(ev.Start.T) {
		p.warn(ev.UID, fmt.Sprintf("event%s ends before it starts; made zero-length", quoteSummary(ev.Summary)))
		ev.End = ev.Start
	}
	return nil
}
