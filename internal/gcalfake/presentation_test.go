package gcalfake_test

import (
	"testing"

	calendar "google.golang.org/api/calendar/v3"
)

// TestPresentationLimits: Google refuses a colour outside its event
// palette and reminders beyond its limits; within them it keeps them.
func TestPresentationLimits(t *testing.T) {
	_, svc := newService(t)
	over := func(n int, minutes int64) *calendar.EventReminders {
		r := &calendar.EventReminders{ForceSendFields: []string{"UseDefault"}}
		for range n {
			r.Overrides = append(r.Overrides, &calendar.EventReminder{Method: "popup", Minutes: minutes})
		}
		return r
	}
	for name, tc := range map[string]struct {
		edit func(*calendar.Event)
		ok   bool
	}{
		"palette":          {func(e *calendar.Event) { e.ColorId = "11" }, true},
		"beyond":           {func(e *calendar.Event) { e.ColorId = "12" }, false},
		"five":             {func(e *calendar.Event) { e.Reminders = over(5, 40320) }, true},
		"six":              {func(e *calendar.Event) { e.Reminders = over(6, 10) }, false},
		"too early":        {func(e *calendar.Event) { e.Reminders = over(1, 40321) }, false},
		"default and list": {func(e *calendar.Event) { e.Reminders = over(1, 10); e.Reminders.UseDefault = true }, false},
	} {
		ev := timed("", name)
		tc.edit(ev)
		got, err := svc.Events.Insert(cal, ev).Do()
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err == nil && (got.ColorId != ev.ColorId || (ev.Reminders != nil) != (got.Reminders != nil)) {
			t.Errorf("%s: stored colour %q reminders %+v", name, got.ColorId, got.Reminders)
		}
	}
}
