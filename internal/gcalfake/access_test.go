package gcalfake_test

import (
	"context"
	"strings"
	"testing"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// serviceAs is a client whose requests the emulator sees as user's.
func serviceAs(t *testing.T, fake *gcalfake.Server, user string) *calendar.Service {
	t.Helper()
	svc, err := calendar.NewService(context.Background(), option.WithEndpoint(gcalfake.Endpoint), option.WithHTTPClient(fake.Client(user)))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// A calendar's roles decide what each user gets, as Google's do: the
// role shows in events lists, a reader's writes are refused with Google's
// requiredAccessLevel, and a calendar not shared with the user is not
// found.
func TestAccessRoles(t *testing.T) {
	fake := gcalfake.New(gcalfake.Options{})
	fake.AddCalendar(cal, "UTC")
	fake.Share(cal, gcalfake.RoleReader)
	fake.Share(cal, gcalfake.RoleWriter, "alice")
	fake.Share(cal, gcalfake.RoleNone, "mallory")

	tests := []struct {
		user      string
		role      string
		canWrite  bool
		canSeeCal bool
	}{
		{"alice", "writer", true, true},
		{"bob", "reader", false, true},
		{"mallory", "", false, false},
	}
	for _, tt := range tests {
		svc := serviceAs(t, fake, tt.user)
		_, err := svc.Calendars.Get(cal).Do()
		if !tt.canSeeCal {
			apiErr(t, err, 404, "notFound")
			_, err = svc.Events.List(cal).Do()
			apiErr(t, err, 404, "notFound")
			continue
		}
		if err != nil {
			t.Fatalf("%s: calendars.get: %v", tt.user, err)
		}
		evs, err := svc.Events.List(cal).MaxResults(1).Do()
		if err != nil || evs.AccessRole != tt.role {
			t.Fatalf("%s: events.list accessRole %q (%v), want %q", tt.user, evs.AccessRole, err, tt.role)
		}
		before := fake.Stats().AcceptedWrites
		_, err = svc.Events.Insert(cal, timed("", tt.user+"'s event")).Do()
		if tt.canWrite {
			if err != nil {
				t.Fatalf("%s: insert: %v", tt.user, err)
			}
			continue
		}
		gerr := apiErr(t, err, 403, "requiredAccessLevel")
		if gerr.Message != "You need to have writer access to this calendar." || !strings.Contains(gerr.Body, `"domain": "calendar"`) && !strings.Contains(gerr.Body, `"domain":"calendar"`) {
			t.Errorf("%s: refusal %+v", tt.user, gerr)
		}
		if fake.Stats().AcceptedWrites != before {
			t.Errorf("%s: a refused write was applied", tt.user)
		}
	}
	// A calendar with no roles is everyone's to own.
	fake.AddCalendar("other@example.com", "UTC")
	evs, err := serviceAs(t, fake, "bob").Events.List("other@example.com").Do()
	if err != nil || evs.AccessRole != "owner" {
		t.Fatalf("unshared calendar: accessRole %q (%v), want owner", evs.AccessRole, err)
	}
}
