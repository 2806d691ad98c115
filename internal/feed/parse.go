package feed

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	ical "github.com/arran4/golang-ical"
)

// ErrNotCalendar is wrapped by errors for input that is not an iCalendar
// feed at all (an HTML login page, an empty body, JSON...).
var ErrNotCalendar = errors.New("not an iCalendar feed")

// Options tune parsing.
type Options struct {
	// DefaultZone resolves floating times when the feed names no
	// X-WR-TIMEZONE ("" means UTC).
	DefaultZone string
}

// Warning is a problem with one event or property that was skipped or
// repaired without failing the feed.
type Warning struct {
	UID     string
	Message string
}

func (w Warning) String() string {
	if w.UID == "" {
		return w.Message
	}
	return w.UID + ": " + w.Message
}

// Calendar is a parsed feed.
type Calendar struct {
	Name     string
	TimeZone string
	Events   []Event
	Warnings []Warning
}

// Parse reads an iCalendar document and normalises its events. It fails
// only when the input is not a calendar; a bad event is skipped with a
// warning.
func Parse(r io.Reader, opts Options) (*Calendar, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("feed: read: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if err := sniff(data); err != nil {
		return nil, err
	}
	ic, err := ical.ParseCalendarWithOptions(bytes.NewReader(data), ical.WithUnknownPropertyHandler(ical.AcceptUnknownPropertyHandler))
	if err != nil {
		return nil, fmt.Errorf("feed: parse: %w", err)
	}
	cal := &Calendar{}
	for _, p := range ic.CalendarProperties {
		switch strings.ToUpper(p.IANAToken) {
		case "X-WR-CALNAME":
			cal.Name = ical.FromText(p.Value)
		case "X-WR-TIMEZONE":
			cal.TimeZone = strings.TrimSpace(p.Value)
		}
	}
	floating := time.UTC
	if z := firstNonEmpty(cal.TimeZone, opts.DefaultZone); z != "" {
		if loc, err := time.LoadLocation(z); err == nil {
			floating = loc
		}
	}
	for i, ve := range ic.Events() {
		ev, err := normalise(ve, floating)
		if err != nil {
			cal.Warnings = append(cal.Warnings, Warning{UID: ev.UID, Message: fmt.Sprintf("event %d skipped: %v", i+1, err)})
			continue
		}
		cal.Events = append(cal.Events, ev)
	}
	return cal, nil
}

// sniff rejects bodies that are clearly not a calendar, with a sentence a
// person can act on.
func sniff(data []byte) error {
	head := bytes.TrimSpace(data)
	if len(head) == 0 {
		return fmt.Errorf("feed: the feed is empty: %w", ErrNotCalendar)
	}
	if len(head) > 512 {
		head = head[:512]
	}
	lower := bytes.ToLower(head)
	if bytes.HasPrefix(lower, []byte("<!doctype html")) || bytes.HasPrefix(lower, []byte("<html")) || bytes.Contains(lower, []byte("<head")) {
		return fmt.Errorf("feed: the feed answered with an HTML page — a login page? %w", ErrNotCalendar)
	}
	if !bytes.HasPrefix(bytes.ToUpper(head), []byte("BEGIN:VCALENDAR")) {
		return fmt.Errorf("feed: the body does not start with BEGIN:VCALENDAR: %w", ErrNotCalendar)
	}
	return nil
}

func normalise(ve *ical.VEvent, floating *time.Location) (Event, error) {
	ev := Event{Status: StatusConfirmed, Transparency: TransparencyOpaque, Visibility: VisibilityDefault}
	get := func(name string) *ical.IANAProperty {
		for i := range ve.Properties {
			if strings.EqualFold(ve.Properties[i].IANAToken, name) {
				return &ve.Properties[i]
			}
		}
		return nil
	}
	text := func(name string) string {
		if p := get(name); p != nil {
			return ical.FromText(p.Value)
		}
		return ""
	}
	ev.UID = strings.TrimSpace(text("UID"))
	ev.Summary = text("SUMMARY")
	ev.Description = text("DESCRIPTION")
	ev.Location = text("LOCATION")
	ev.URL = strings.TrimSpace(text("URL"))
	if p := get("SEQUENCE"); p != nil {
		ev.Sequence, _ = strconv.Atoi(strings.TrimSpace(p.Value))
	}
	switch strings.ToUpper(text("STATUS")) {
	case "CANCELLED":
		ev.Status = StatusCancelled
	case "TENTATIVE":
		ev.Status = StatusTentative
	}
	if strings.EqualFold(text("TRANSP"), "TRANSPARENT") {
		ev.Transparency = TransparencyTransparent
	}
	switch strings.ToUpper(text("CLASS")) {
	case "PUBLIC":
		ev.Visibility = VisibilityPublic
	case "PRIVATE":
		ev.Visibility = VisibilityPrivate
	case "CONFIDENTIAL":
		ev.Visibility = VisibilityConfidential
	}
	if ev.UID == "" {
		return ev, errors.New("no UID")
	}
	start := get("DTSTART")
	if start == nil {
		return ev, errors.New("no DTSTART")
	}
	var err error
	if ev.Start, err = parseTime(start, floating); err != nil {
		return ev, fmt.Errorf("DTSTART: %w", err)
	}
	switch {
	case get("DTEND") == nil && get("DURATION") != nil:
		d, err := ParseDuration(get("DURATION").Value)
		if err != nil {
			return ev, fmt.Errorf("DURATION: %w", err)
		}
		ev.End = ev.Start
		ev.End.T = addDuration(ev.Start.T, d)
	case get("DTEND") != nil:
		if ev.End, err = parseTime(get("DTEND"), floating); err != nil {
			return ev, fmt.Errorf("DTEND: %w", err)
		}
	case ev.Start.AllDay:
		ev.End = Time{AllDay: true, T: ev.Start.T.AddDate(0, 0, 1)}
	default:
		ev.End = ev.Start
	}
	if ev.End.T.Before(ev.Start.T) {
		ev.End = ev.Start
	}
	if p := get("RECURRENCE-ID"); p != nil {
		t, err := parseTime(p, floating)
		if err != nil {
			return ev, fmt.Errorf("RECURRENCE-ID: %w", err)
		}
		ev.RecurrenceID = CanonicalRecurrenceID(t)
	}
	for _, p := range ve.Properties {
		if strings.EqualFold(p.IANAToken, "RRULE") {
			ev.Recurrence = append(ev.Recurrence, "RRULE:"+strings.TrimSpace(p.Value))
		}
	}
	ev.Hash = ev.ComputeHash()
	return ev, nil
}

// CanonicalRecurrenceID renders a RECURRENCE-ID as mapping keys store it.
func CanonicalRecurrenceID(t Time) string {
	if t.AllDay {
		return t.T.Format("20060102")
	}
	return t.T.UTC().Format("20060102T150405Z")
}

func parseTime(p *ical.IANAProperty, floating *time.Location) (Time, error) {
	v := strings.TrimSpace(p.Value)
	isDate := len(v) == 8
	if vals := p.ICalParameters["VALUE"]; len(vals) > 0 && strings.EqualFold(vals[0], "DATE") {
		isDate = true
	}
	if isDate {
		d, err := time.Parse("20060102", v[:min(8, len(v))])
		if err != nil {
			return Time{}, fmt.Errorf("invalid date %q", v)
		}
		return Time{AllDay: true, T: d}, nil
	}
	if strings.HasSuffix(v, "Z") {
		t, err := time.Parse("20060102T150405Z", v)
		if err != nil {
			return Time{}, fmt.Errorf("invalid UTC time %q", v)
		}
		return Time{T: t}, nil
	}
	loc, zone := floating, ""
	if floating != time.UTC {
		zone = floating.String()
	}
	if ids := p.ICalParameters["TZID"]; len(ids) > 0 {
		if l, err := time.LoadLocation(strings.Trim(ids[0], `"`)); err == nil {
			loc, zone = l, l.String()
		}
	}
	t, err := time.ParseInLocation("20060102T150405", v, loc)
	if err != nil {
		return Time{}, fmt.Errorf("invalid time %q", v)
	}
	return Time{T: t, Zone: zone}, nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// Duration is an RFC 5545 duration: days and weeks are nominal (they follow
// the calendar across DST changes), hours and below are exact.
type Duration struct {
	Days  int
	Exact time.Duration
}

// ParseDuration parses an RFC 5545 DURATION value such as "PT1H30M",
// "P1D", "-PT15M" or "P1W".
func ParseDuration(v string) (Duration, error) {
	s := strings.ToUpper(strings.TrimSpace(v))
	neg := false
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	if !strings.HasPrefix(s, "P") || len(s) < 3 {
		return Duration{}, fmt.Errorf("invalid duration %q", v)
	}
	s = s[1:]
	var d Duration
	inTime := false
	num := 0
	digits := 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			num = num*10 + int(c-'0')
			digits++
			if num > 1e7 {
				return Duration{}, fmt.Errorf("duration %q is too long", v)
			}
			continue
		case c == 'T':
			if inTime || digits > 0 {
				return Duration{}, fmt.Errorf("invalid duration %q", v)
			}
			inTime = true
			continue
		}
		if digits == 0 {
			return Duration{}, fmt.Errorf("invalid duration %q", v)
		}
		switch {
		case c == 'W' && !inTime:
			d.Days += 7 * num
		case c == 'D' && !inTime:
			d.Days += num
		case c == 'H' && inTime:
			d.Exact += time.Duration(num) * time.Hour
		case c == 'M' && inTime:
			d.Exact += time.Duration(num) * time.Minute
		case c == 'S' && inTime:
			d.Exact += time.Duration(num) * time.Second
		default:
			return Duration{}, fmt.Errorf("invalid duration %q", v)
		}
		num, digits = 0, 0
	}
	if digits > 0 {
		return Duration{}, fmt.Errorf("invalid duration %q", v)
	}
	if neg {
		d.Days, d.Exact = -d.Days, -d.Exact
	}
	return d, nil
}

func addDuration(t time.Time, d Duration) time.Time {
	return t.AddDate(0, 0, d.Days).Add(d.Exact)
}
