package gcalfake_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	calendar "google.golang.org/api/calendar/v3"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// calendarList.list answers, through the real client's paging, the
// calendars a user may see with their names, zones and the user's role;
// a read-only calendar (Add with a Role) lists as such and refuses
// writes.
func TestCalendarList(t *testing.T) {
	fake := gcalfake.New(gcalfake.Options{})
	fake.Add(gcalfake.Calendar{ID: "me@example.com", Summary: "Me", TimeZone: "Europe/Berlin"})
	fake.SetPrimary("", "me@example.com")
	fake.Add(gcalfake.Calendar{ID: "holidays@group.v.calendar.google.com", Summary: "Holidays", Role: gcalfake.RoleReader})
	fake.Add(gcalfake.Calendar{ID: "boss@example.com", Summary: "Boss", Role: gcalfake.RoleFreeBusyReader})
	for i := range 7 {
		fake.AddCalendar(fmt.Sprintf("team%d@group.calendar.google.com", i), "UTC")
	}
	fake.AddCalendar("secret@example.com", "UTC")
	fake.Share("secret@example.com", gcalfake.RoleNone, "bob")
	fake.Share("team0@group.calendar.google.com", gcalfake.RoleWriter, "bob")

	tests := []struct {
		user, minRole string
		pageSize      int64
		want          []string // id=role, in order
	}{
		{"alice", "", 3, []string{"me@example.com=owner", "boss@example.com=freeBusyReader", "holidays@group.v.calendar.google.com=reader",
			"secret@example.com=owner", "team0@group.calendar.google.com=owner", "team1@group.calendar.google.com=owner",
			"team2@group.calendar.google.com=owner", "team3@group.calendar.google.com=owner", "team4@group.calendar.google.com=owner",
			"team5@group.calendar.google.com=owner", "team6@group.calendar.google.com=owner"}},
		{"bob", "writer", 2, []string{"me@example.com=owner", "team0@group.calendar.google.com=writer", "team1@group.calendar.google.com=owner",
			"team2@group.calendar.google.com=owner", "team3@group.calendar.google.com=owner", "team4@group.calendar.google.com=owner",
			"team5@group.calendar.google.com=owner", "team6@group.calendar.google.com=owner"}},
		{"carol", "reader", 250, []string{"me@example.com=owner", "holidays@group.v.calendar.google.com=reader",
			"secret@example.com=owner", "team0@group.calendar.google.com=owner", "team1@group.calendar.google.com=owner",
			"team2@group.calendar.google.com=owner", "team3@group.calendar.google.com=owner", "team4@group.calendar.google.com=owner",
			"team5@group.calendar.google.com=owner", "team6@group.calendar.google.com=owner"}},
	}
	for _, tt := range tests {
		svc := serviceAs(t, fake, tt.user)
		call := svc.CalendarList.List().MaxResults(tt.pageSize)
		if tt.minRole != "" {
			call = call.MinAccessRole(tt.minRole)
		}
		var got []string
		pages := 0
		err := call.Pages(context.Background(), func(l *calendar.CalendarList) error {
			pages++
			if int64(len(l.Items)) > tt.pageSize {
				t.Errorf("%s: a page of %d, asked for %d", tt.user, len(l.Items), tt.pageSize)
			}
			for _, e := range l.Items {
				got = append(got, e.Id+"="+e.AccessRole)
				if e.Primary != (e.Id == "me@example.com") {
					t.Errorf("%s: %s primary=%v", tt.user, e.Id, e.Primary)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", tt.user, err)
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s: listed\n%v\nwant\n%v", tt.user, got, tt.want)
		}
		if wantPages := (len(tt.want) + int(tt.pageSize) - 1) / int(tt.pageSize); pages != wantPages {
			t.Errorf("%s: %d pages, want %d", tt.user, pages, wantPages)
		}
	}

	svc := serviceAs(t, fake, "alice")
	l, err := svc.CalendarList.List().MaxResults(1).Do()
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("first entry: %v %v", l, err)
	}
	if e := l.Items[0]; e.Summary != "Me" || e.TimeZone != "Europe/Berlin" || e.Kind != "calendar#calendarListEntry" {
		t.Errorf("entry %+v", e)
	}
	for _, id := range []string{"holidays@group.v.calendar.google.com", "boss@example.com"} {
		_, err = svc.Events.Insert(id, &calendar.Event{Summary: "x", Start: &calendar.EventDateTime{Date: "2030-01-01"},
			End: &calendar.EventDateTime{Date: "2030-01-02"}}).Do()
		apiErr(t, err, 403, "requiredAccessLevel")
	}
	_, err = svc.CalendarList.List().PageToken("!!").Do()
	apiErr(t, err, 400, "invalid")
}

// With AutoCreateCalendars every calendar id a request names exists,
// "primary" included, empty and writable; without it, unknown ids are
// not found.
func TestAutoCreateCalendars(t *testing.T) {
	tests := []struct {
		auto bool
	}{{true}, {false}}
	for _, tt := range tests {
		fake := gcalfake.New(gcalfake.Options{AutoCreateCalendars: tt.auto, AutoCreateTimeZone: "Europe/Paris"})
		svc := serviceAs(t, fake, "alice")
		for _, id := range []string{"anything@example.org", "primary"} {
			c, err := svc.Calendars.Get(id).Do()
			if !tt.auto {
				apiErr(t, err, 404, "notFound")
				continue
			}
			if err != nil || c.Id != id || c.TimeZone != "Europe/Paris" {
				t.Fatalf("auto %s: %+v %v", id, c, err)
			}
			ev, err := svc.Events.Insert(id, &calendar.Event{Summary: "x", Start: &calendar.EventDateTime{Date: "2030-01-01"},
				End: &calendar.EventDateTime{Date: "2030-01-02"}}).Do()
			if err != nil {
				t.Fatalf("insert into %s: %v", id, err)
			}
			if got := fake.Events(id); len(got) != 1 || got[0].Id != ev.Id {
				t.Errorf("%s holds %v", id, got)
			}
		}
		l, err := svc.CalendarList.List().Do()
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 2, false: 0}[tt.auto]; len(l.Items) != want {
			t.Errorf("auto=%v: %d calendars listed, want %d", tt.auto, len(l.Items), want)
		}
	}
}
