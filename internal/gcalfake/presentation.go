package gcalfake

import (
	"strconv"

	calendar "google.golang.org/api/calendar/v3"
)

// validatePresentation applies Google's rules on an event's colour and
// reminders (the reference documents the limits, not the wording of the
// errors): a colour id of the event palette, "1" to "11"; at most five
// overrides, each popup or email, 0 to 40320 minutes; no overrides
// together with useDefault.
func validatePresentation(ev *calendar.Event) *APIError {
	if ev.ColorId != "" {
		if n, err := strconv.Atoi(ev.ColorId); err != nil || n < 1 || n > 11 {
			return errBadRequest("Invalid color id.")
		}
	}
	r := ev.Reminders
	if r == nil {
		return nil
	}
	if r.UseDefault && len(r.Overrides) > 0 {
		return errBadRequest("Cannot specify both default reminders and overrides at the same time.")
	}
	if len(r.Overrides) > 5 {
		return errBadRequest("Too many reminders.")
	}
	for _, o := range r.Overrides {
		if o.Method != "popup" && o.Method != "email" {
			return errBadRequest("Invalid reminder method.")
		}
		if o.Minutes < 0 || o.Minutes > 40320 {
			return errBadRequest("Invalid reminder minutes.")
		}
	}
	return nil
}
