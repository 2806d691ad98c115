package gcalfake_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

const cal = "primary@example.com"

func newService(t *testing.T) (*gcalfake.Server, *calendar.Service) {
	t.Helper()
	fake := gcalfake.New(gcalfake.Options{Seed: 7})
	fake.AddCalendar(cal, "Europe/Berlin")
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	svc, err := calendar.NewService(context.Background(), option.WithEndpoint(srv.URL+gcalfake.BasePath), option.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return fake, svc
}

func timed(id, summary string) *calendar.Event {
	return &calendar.Event{Id: id, Summary: summary,
		Start: &calendar.EventDateTime{DateTime: "2027-01-11T10:00:00+01:00"},
		End:   &calendar.EventDateTime{DateTime: "2027-01-11T11:00:00+01:00"}}
}

// apiErr asserts err is a Google error with the given code and reason.
func apiErr(t *testing.T, err error, code int, reason string) *googleapi.Error {
	t.Helper()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) {
		t.Fatalf("err = %v, want a googleapi.Error %d %s", err, code, reason)
	}
	if gerr.Code != code || len(gerr.Errors) == 0 || gerr.Errors[0].Reason != reason {
		t.Fatalf("err = %d %+v, want %d %s", gerr.Code, gerr.Errors, code, reason)
	}
	return gerr
}

func TestInsertGetDeleteSemantics(t *testing.T) {
	fake, svc := newService(t)
	ev, err := svc.Events.Insert(cal, timed("abcdef01", "Planning")).Do()
	if err != nil {
		t.Fatal(err)
	}
	if ev.Etag == "" || ev.Status != "confirmed" || ev.Created == "" || ev.ICalUID == "" {
		t.Fatalf("inserted = %+v", ev)
	}
	_, err = svc.Events.Insert(cal, timed("abcdef01", "Twin")).Do()
	gerr := apiErr(t, err, 409, "duplicate")
	if gerr.Message != "The requested identifier already exists." {
		t.Errorf("409 message = %q", gerr.Message)
	}
	if err := svc.Events.Delete(cal, "abcdef01").Do(); err != nil {
		t.Fatal(err)
	}
	apiErr(t, svc.Events.Delete(cal, "abcdef01").Do(), 410, "deleted")
	// A deleted id still answers 409, and get still returns it, cancelled.
	_, err = svc.Events.Insert(cal, timed("abcdef01", "Again")).Do()
	apiErr(t, err, 409, "duplicate")
	got, err := svc.Events.Get(cal, "abcdef01").Do()
	if err != nil || got.Status != "cancelled" {
		t.Fatalf("get deleted = %+v, %v", got, err)
	}
	// It can be restored with an update.
	restore := timed("", "Planning")
	restore.Status = "confirmed"
	if _, err := svc.Events.Update(cal, "abcdef01", restore).Do(); err != nil {
		t.Fatal(err)
	}
	if n := len(fake.Events(cal)); n != 1 {
		t.Fatalf("live events = %d, want 1", n)
	}
	// After the bin is emptied the id is burnt.
	if err := svc.Events.Delete(cal, "abcdef01").Do(); err != nil {
		t.Fatal(err)
	}
	fake.EmptyBin(cal)
	_, err = svc.Events.Insert(cal, timed("abcdef01", "Again")).Do()
	apiErr(t, err, 409, "duplicate")
	_, err = svc.Events.Get(cal, "abcdef01").Do()
	apiErr(t, err, 404, "notFound")
	_, err = svc.Events.Update(cal, "abcdef01", timed("", "x")).Do()
	apiErr(t, err, 403, "forbidden")
}

func TestNotFound(t *testing.T) {
	_, svc := newService(t)
	_, err := svc.Events.Get(cal, "nosuchevent").Do()
	apiErr(t, err, 404, "notFound")
	_, err = svc.Events.Insert("other@example.com", timed("abcdef02", "x")).Do()
	apiErr(t, err, 404, "notFound")
	_, err = svc.Calendars.Get("other@example.com").Do()
	apiErr(t, err, 404, "notFound")
	_, err = svc.Events.Update(cal, "nosuchevent", timed("", "x")).Do()
	apiErr(t, err, 404, "notFound")
}

func TestValidation(t *testing.T) {
	_, svc := newService(t)
	tests := []struct {
		name   string
		ev     *calendar.Event
		reason string
	}{
		{"id with uppercase", timed("ABCDEF", "x"), "invalid"},
		{"id too short", timed("abcd", "x"), "invalid"},
		{"id outside base32hex", timed("abcdwxyz", "x"), "invalid"},
		{"no end", &calendar.Event{Start: &calendar.EventDateTime{Date: "2027-01-01"}}, "required"},
		{"end before start", &calendar.Event{Start: &calendar.EventDateTime{Date: "2027-01-02"}, End: &calendar.EventDateTime{Date: "2027-01-01"}}, "timeRangeEmpty"},
		{"windows zone name", &calendar.Event{
			Start: &calendar.EventDateTime{DateTime: "2027-01-11T10:00:00", TimeZone: "W. Europe Standard Time"},
			End:   &calendar.EventDateTime{DateTime: "2027-01-11T11:00:00", TimeZone: "W. Europe Standard Time"}}, "badRequest"},
		{"recurring without time zone", &calendar.Event{Recurrence: []string{"RRULE:FREQ=WEEKLY"},
			Start: &calendar.EventDateTime{DateTime: "2027-01-11T10:00:00+01:00"}, End: &calendar.EventDateTime{DateTime: "2027-01-11T11:00:00+01:00"}}, "badRequest"},
		{"DTSTART in recurrence", &calendar.Event{Recurrence: []string{"DTSTART:20270111T100000Z", "RRULE:FREQ=WEEKLY"},
			Start: &calendar.EventDateTime{DateTime: "2027-01-11T10:00:00+01:00", TimeZone: "Europe/Berlin"},
			End:   &calendar.EventDateTime{DateTime: "2027-01-11T11:00:00+01:00", TimeZone: "Europe/Berlin"}}, "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := svc.Events.Insert(cal, tt.ev).Do()
			apiErr(t, err, 400, tt.reason)
		})
	}
}

func TestIfMatch(t *testing.T) {
	fake, svc := newService(t)
	ev, err := svc.Events.Insert(cal, timed("abcdef03", "Mine")).Do()
	if err != nil {
		t.Fatal(err)
	}
	fake.Edit(cal, "abcdef03", func(e *calendar.Event) { e.ColorId = "5" })
	call := svc.Events.Update(cal, "abcdef03", timed("", "Feed version"))
	call.Header().Set("If-Match", ev.Etag)
	_, err = call.Do()
	apiErr(t, err, 412, "conditionNotMet")
}

func TestListPagesAndFiltersByPrivateProperty(t *testing.T) {
	fake, svc := newService(t)
	for i := 0; i < 7; i++ {
		ev := timed(fmt.Sprintf("evt%05d", i), fmt.Sprint("ours ", i))
		ev.ExtendedProperties = &calendar.EventExtendedProperties{Private: map[string]string{"calsyncd_sub": "team"}}
		if _, err := svc.Events.Insert(cal, ev).Do(); err != nil {
			t.Fatal(err)
		}
	}
	fake.Seed(cal, timed("", "a person's own"))
	if err := svc.Events.Delete(cal, "evt00000").Do(); err != nil {
		t.Fatal(err)
	}
	count := func(showDeleted bool) (n, pages int) {
		err := svc.Events.List(cal).PrivateExtendedProperty("calsyncd_sub=team").ShowDeleted(showDeleted).MaxResults(3).
			Pages(context.Background(), func(evs *calendar.Events) error {
				pages++
				n += len(evs.Items)
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		return n, pages
	}
	if n, pages := count(false); n != 6 || pages != 2 {
		t.Errorf("live owned = %d in %d pages, want 6 in 2", n, pages)
	}
	if n, _ := count(true); n != 7 {
		t.Errorf("owned with deleted = %d, want 7", n)
	}
	all, err := svc.Events.List(cal).Do()
	if err != nil || len(all.Items) != 7 {
		t.Fatalf("unfiltered list = %d, %v; want 7", len(all.Items), err)
	}
}

func TestExtendedPropertyLimits(t *testing.T) {
	_, svc := newService(t)
	long := make([]byte, 1100)
	for i := range long {
		long[i] = 'x'
	}
	ev := timed("abcdef04", "x")
	ev.ExtendedProperties = &calendar.EventExtendedProperties{Private: map[string]string{
		"a_key_that_is_much_longer_than_forty_four_chars": "dropped", "ok": string(long)}}
	got, err := svc.Events.Insert(cal, ev).Do()
	if err != nil {
		t.Fatal(err)
	}
	p := got.ExtendedProperties.Private
	if _, ok := p["a_key_that_is_much_longer_than_forty_four_chars"]; ok || len(p["ok"]) != 1024 {
		t.Errorf("limits not applied: %d keys, value %d chars", len(p), len(p["ok"]))
	}
}
