package gcalfake

import (
	"fmt"
	"strings"
	"sync"
	"time"

	calendar "google.golang.org/api/calendar/v3"
)

// validateEvent applies the checks Google makes on insert and update.
func validateEvent(ev *calendar.Event) *APIError {
	if ev.Start == nil {
		return errRequired("Missing start time.")
	}
	if ev.End == nil {
		return errRequired("Missing end time.")
	}
	start, err := parseEventTime(ev.Start, "start")
	if err != nil {
		return err
	}
	end, err := parseEventTime(ev.End, "end")
	if err != nil {
		return err
	}
	if (ev.Start.Date == "") != (ev.End.Date == "") {
		return errBadRequest("Start and end times must either both be date or both be dateTime.")
	}
	if end.Before(start) {
		return errTimeRangeEmpty()
	}
	if len(ev.Recurrence) > 0 {
		if ev.Start.Date == "" && ev.Start.TimeZone == "" {
			return errBadRequest("Missing time zone definition for start time.")
		}
		if ev.RecurringEventId != "" {
			// An instance cannot carry a recurrence of its own.
			return errInvalidRecurrence()
		}
		for _, line := range ev.Recurrence {
			if apiErr := validateRecurrenceLine(line); apiErr != nil {
				return apiErr
			}
		}
		if _, apiErr := parseSeries(ev); apiErr != nil {
			return apiErr
		}
	}
	switch ev.Status {
	case "", "confirmed", "tentative", "cancelled":
	default:
		return errInvalid("Invalid value for: Invalid event status.")
	}
	switch ev.Transparency {
	case "", "opaque", "transparent":
	default:
		return errInvalid("Invalid value for: Invalid transparency.")
	}
	switch ev.Visibility {
	case "", "default", "public", "private", "confidential":
	default:
		return errInvalid("Invalid value for: Invalid visibility.")
	}
	return validatePresentation(ev)
}

func parseEventTime(t *calendar.EventDateTime, which string) (time.Time, *APIError) {
	switch {
	case t.Date != "" && t.DateTime != "":
		return time.Time{}, errBadRequest(fmt.Sprintf("Invalid %s time.", which))
	case t.Date != "":
		d, err := time.Parse("2006-01-02", t.Date)
		if err != nil {
			return time.Time{}, errBadRequest(fmt.Sprintf("Invalid %s time.", which))
		}
		if t.TimeZone != "" {
			if _, err := loadLocation(t.TimeZone); err != nil {
				return time.Time{}, errBadRequest(fmt.Sprintf("Invalid time zone definition for %s time.", which))
			}
		}
		return d, nil
	case t.DateTime != "":
		var loc *time.Location
		if t.TimeZone != "" {
			l, err := loadLocation(t.TimeZone)
			if err != nil || strings.Contains(t.TimeZone, " ") {
				return time.Time{}, errBadRequest(fmt.Sprintf("Invalid time zone definition for %s time.", which))
			}
			loc = l
		}
		if ts, err := time.Parse(time.RFC3339, t.DateTime); err == nil {
			return ts, nil
		}
		if loc == nil {
			return time.Time{}, errBadRequest(fmt.Sprintf("Missing time zone definition for %s time.", which))
		}
		ts, err := time.ParseInLocation("2006-01-02T15:04:05", t.DateTime, loc)
		if err != nil {
			return time.Time{}, errBadRequest(fmt.Sprintf("Invalid %s time.", which))
		}
		return ts, nil
	}
	return time.Time{}, errRequired(fmt.Sprintf("Missing %s time.", which))
}

// eventSpan is an event's start and end instants (dates at UTC midnight).
func eventSpan(ev *calendar.Event) (time.Time, time.Time, error) {
	if ev.Start == nil || ev.End == nil {
		return time.Time{}, time.Time{}, fmt.Errorf("no start or end")
	}
	s, e1 := parseEventTime(ev.Start, "start")
	e, e2 := parseEventTime(ev.End, "end")
	if e1 != nil {
		return s, e, e1
	}
	if e2 != nil {
		return s, e, e2
	}
	return s, e, nil
}

func validateRecurrenceLine(line string) *APIError {
	name, value, ok := strings.Cut(line, ":")
	if !ok || value == "" {
		return errInvalid("Invalid recurrence rule.")
	}
	base, _, _ := strings.Cut(strings.ToUpper(name), ";")
	switch base {
	case "RRULE", "EXRULE":
		if !strings.Contains(strings.ToUpper(value), "FREQ=") {
			return errInvalid("Invalid recurrence rule.")
		}
	case "RDATE", "EXDATE":
	default:
		// DTSTART, DTEND and anything else are not allowed in recurrence.
		return errInvalid("Invalid recurrence rule.")
	}
	return nil
}

// zones caches loaded time zones: the emulator reads one for every
// instance it expands, and loading reads the zone database.
var zones sync.Map // name -> zoneEntry

type zoneEntry struct {
	loc *time.Location
	err error
}

func loadLocation(name string) (*time.Location, error) {
	if e, ok := zones.Load(name); ok {
		return e.(zoneEntry).loc, e.(zoneEntry).err
	}
	loc, err := time.LoadLocation(name)
	zones.Store(name, zoneEntry{loc, err})
	return loc, err
}
