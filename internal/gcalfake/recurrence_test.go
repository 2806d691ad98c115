package gcalfake_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// weekly is a Monday 09:30-10:00 Berlin series starting 2027-03-15 that
// crosses the change to summer time on 2027-03-28.
func weekly(id string, rule ...string) *calendar.Event {
	return &calendar.Event{Id: id, Summary: "Team sync", Recurrence: rule,
		Start: &calendar.EventDateTime{DateTime: "2027-03-15T09:30:00+01:00", TimeZone: "Europe/Berlin"},
		End:   &calendar.EventDateTime{DateTime: "2027-03-15T10:00:00+01:00", TimeZone: "Europe/Berlin"}}
}

func agenda(fake *gcalfake.Server, from, to string) []string {
	f, _ := time.Parse("2006-01-02", from)
	t, _ := time.Parse("2006-01-02", to)
	var out []string
	for _, o := range fake.Agenda(cal, f, t) {
		out = append(out, o.String())
	}
	return out
}

func TestInstancesFollowTheWallClockAcrossDST(t *testing.T) {
	fake, svc := newService(t)
	if _, err := svc.Events.Insert(cal, weekly("series01", "RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=4")).Do(); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Events.Instances(cal, "series01").Do()
	if err != nil {
		t.Fatal(err)
	}
	var ids, starts []string
	for _, in := range got.Items {
		ids = append(ids, in.Id)
		starts = append(starts, in.Start.DateTime)
		if in.RecurringEventId != "series01" || in.OriginalStartTime == nil || in.OriginalStartTime.DateTime != in.Start.DateTime || len(in.Recurrence) != 0 {
			t.Errorf("instance %s: recurringEventId %q originalStartTime %+v recurrence %v", in.Id, in.RecurringEventId, in.OriginalStartTime, in.Recurrence)
		}
	}
	wantIDs := "[series01_20270315T083000Z series01_20270322T083000Z series01_20270329T073000Z series01_20270405T073000Z]"
	if fmt.Sprint(ids) != wantIDs {
		t.Errorf("ids = %v, want %s", ids, wantIDs)
	}
	wantStarts := "[2027-03-15T09:30:00+01:00 2027-03-22T09:30:00+01:00 2027-03-29T09:30:00+02:00 2027-04-05T09:30:00+02:00]"
	if fmt.Sprint(starts) != wantStarts {
		t.Errorf("starts = %v, want %s", starts, wantStarts)
	}
	if a := agenda(fake, "2027-03-01", "2027-05-01"); len(a) != 4 || a[3] != `2027-04-05T07:30:00Z..2027-04-05T08:00:00Z "Team sync"` {
		t.Errorf("agenda = %q", a)
	}
}

func TestExceptionsMoveRetitleAndCancelInstances(t *testing.T) {
	fake, svc := newService(t)
	if _, err := svc.Events.Insert(cal, weekly("series02", "RRULE:FREQ=WEEKLY;UNTIL=20270412T235959Z")).Do(); err != nil {
		t.Fatal(err)
	}
	find := func(originalStart string, showDeleted bool) *calendar.Event {
		t.Helper()
		got, err := svc.Events.Instances(cal, "series02").OriginalStart(originalStart).ShowDeleted(showDeleted).Do()
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Items) != 1 {
			t.Fatalf("instances at %s = %d, want 1", originalStart, len(got.Items))
		}
		return got.Items[0]
	}
	in := find("2027-03-22T09:30:00+01:00", false)
	moved := &calendar.Event{Summary: "Team sync (moved)",
		Start: &calendar.EventDateTime{DateTime: "2027-03-23T14:00:00+01:00", TimeZone: "Europe/Berlin"},
		End:   &calendar.EventDateTime{DateTime: "2027-03-23T14:30:00+01:00", TimeZone: "Europe/Berlin"}}
	call := svc.Events.Update(cal, in.Id, moved)
	call.Header().Set("If-Match", in.Etag)
	exc, err := call.Do()
	if err != nil {
		t.Fatal(err)
	}
	if exc.Id != in.Id || exc.RecurringEventId != "series02" || exc.OriginalStartTime.DateTime != "2027-03-22T09:30:00+01:00" {
		t.Errorf("exception = %s recurring %q original %+v", exc.Id, exc.RecurringEventId, exc.OriginalStartTime)
	}
	// Cancelling one instance with a PUT, another with a DELETE.
	c := find("2027-03-29T09:30:00+02:00", false)
	c.Status = "cancelled"
	if _, err := svc.Events.Update(cal, c.Id, c).Do(); err != nil {
		t.Fatal(err)
	}
	d := find("2027-04-05T09:30:00+02:00", false)
	if err := svc.Events.Delete(cal, d.Id).Do(); err != nil {
		t.Fatal(err)
	}
	apiErr(t, svc.Events.Delete(cal, d.Id).Do(), 410, "deleted")
	want := []string{
		`2027-03-15T08:30:00Z..2027-03-15T09:00:00Z "Team sync"`,
		`2027-03-23T13:00:00Z..2027-03-23T13:30:00Z "Team sync (moved)"`,
		`2027-04-12T07:30:00Z..2027-04-12T08:00:00Z "Team sync"`,
	}
	if got := agenda(fake, "2027-03-01", "2027-05-01"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("agenda =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The cancelled instance is still found with showDeleted, and can be
	// brought back.
	if got := find("2027-03-29T09:30:00+02:00", true); got.Status != "cancelled" {
		t.Errorf("cancelled instance status = %q", got.Status)
	}
	back := weekly("")
	back.Recurrence = nil
	back.Start.DateTime, back.End.DateTime = "2027-03-29T09:30:00+02:00", "2027-03-29T10:00:00+02:00"
	if _, err := svc.Events.Update(cal, c.Id, back).Do(); err != nil {
		t.Fatal(err)
	}
	if n := len(agenda(fake, "2027-03-01", "2027-05-01")); n != 4 {
		t.Errorf("after restoring an instance the agenda has %d entries, want 4", n)
	}
	// Exceptions are events of their own: listed without singleEvents, but
	// in place of their instance with it.
	all, err := svc.Events.List(cal).ShowDeleted(true).Do()
	if err != nil || len(all.Items) != 4 {
		t.Fatalf("list = %d items (%v), want the master and 3 exceptions", len(all.Items), err)
	}
	singles, err := svc.Events.List(cal).SingleEvents(true).OrderBy("startTime").TimeMin("2027-03-20T00:00:00Z").TimeMax("2027-04-10T00:00:00Z").Do()
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, ev := range singles.Items {
		titles = append(titles, ev.Summary)
	}
	if fmt.Sprint(titles) != "[Team sync (moved) Team sync]" {
		t.Errorf("singleEvents titles = %v", titles)
	}
	if _, err := svc.Events.List(cal).OrderBy("startTime").Do(); err == nil {
		t.Error("orderBy=startTime without singleEvents was accepted")
	}
}

func TestMasterChangesHideOrphanedExceptionsAndKeepOthers(t *testing.T) {
	fake, svc := newService(t)
	master, err := svc.Events.Insert(cal, weekly("series03", "RRULE:FREQ=WEEKLY;COUNT=4")).Do()
	if err != nil {
		t.Fatal(err)
	}
	fake.Edit(cal, "series03_20270322T083000Z", func(ev *calendar.Event) { ev.Summary = "Moved" })
	fake.Edit(cal, "series03_20270405T073000Z", func(ev *calendar.Event) { ev.Summary = "Last" })
	// Retitle the series and end it after three instances.
	master.Summary = "Renamed"
	master.Recurrence = []string{"RRULE:FREQ=WEEKLY;COUNT=3"}
	if _, err := svc.Events.Update(cal, "series03", master).Do(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`2027-03-15T08:30:00Z..2027-03-15T09:00:00Z "Renamed"`,
		`2027-03-22T08:30:00Z..2027-03-22T09:00:00Z "Moved"`,
		`2027-03-29T07:30:00Z..2027-03-29T08:00:00Z "Renamed"`,
	}
	if got := agenda(fake, "2027-03-01", "2027-05-01"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("agenda =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(fake.Events(cal)); n != 2 {
		t.Errorf("stored live events = %d, want the master and the one exception still shown", n)
	}
	// Deleting the master takes every instance with it.
	if err := svc.Events.Delete(cal, "series03").Do(); err != nil {
		t.Fatal(err)
	}
	if got := agenda(fake, "2027-03-01", "2027-05-01"); len(got) != 0 {
		t.Errorf("agenda after deleting the series = %q", got)
	}
	_, err = svc.Events.Instances(cal, "series03").Do()
	apiErr(t, err, 410, "deleted")
}

func TestExdateRdateAndAllDaySeries(t *testing.T) {
	fake, svc := newService(t)
	ev := weekly("series04", "RRULE:FREQ=WEEKLY;COUNT=3", "EXDATE;TZID=Europe/Berlin:20270322T093000", "RDATE:20270324T120000Z")
	if _, err := svc.Events.Insert(cal, ev).Do(); err != nil {
		t.Fatal(err)
	}
	allDay := &calendar.Event{Id: "closed01", Summary: "Office closed", Recurrence: []string{"RRULE:FREQ=YEARLY;UNTIL=20290101", "EXDATE;VALUE=DATE:20280106"},
		Start: &calendar.EventDateTime{Date: "2027-01-06"}, End: &calendar.EventDateTime{Date: "2027-01-07"}}
	if _, err := svc.Events.Insert(cal, allDay).Do(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`2027-01-06..2027-01-07 "Office closed"`,
		`2027-03-15T08:30:00Z..2027-03-15T09:00:00Z "Team sync"`,
		`2027-03-24T12:00:00Z..2027-03-24T12:30:00Z "Team sync"`,
		`2027-03-29T07:30:00Z..2027-03-29T08:00:00Z "Team sync"`,
	}
	if got := agenda(fake, "2027-01-01", "2029-12-31"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("agenda =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got, err := svc.Events.Instances(cal, "closed01").OriginalStart("2027-01-06").Do()
	if err != nil || len(got.Items) != 1 || got.Items[0].Id != "closed01_20270106" || got.Items[0].OriginalStartTime.Date != "2027-01-06" {
		t.Fatalf("all-day instance = %+v, %v", got, err)
	}
	// An excluded date is no instance: there is nothing to write there.
	_, err = svc.Events.Get(cal, "series04_20270322T083000Z").Do()
	apiErr(t, err, 404, "notFound")
}

func TestStartOutsideTheRuleIsTheFirstInstance(t *testing.T) {
	fake, svc := newService(t)
	// A Monday start with a Tuesday rule: the Monday counts, COUNT included.
	if _, err := svc.Events.Insert(cal, weekly("series05", "RRULE:FREQ=WEEKLY;BYDAY=TU;COUNT=2")).Do(); err != nil {
		t.Fatal(err)
	}
	want := []string{`2027-03-15T08:30:00Z..2027-03-15T09:00:00Z "Team sync"`, `2027-03-16T08:30:00Z..2027-03-16T09:00:00Z "Team sync"`}
	if got := agenda(fake, "2027-03-01", "2027-05-01"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("agenda = %q, want %q", got, want)
	}
}

func TestInstancesPageThroughAnEndlessSeries(t *testing.T) {
	_, svc := newService(t)
	if _, err := svc.Events.Insert(cal, weekly("series06", "RRULE:FREQ=DAILY")).Do(); err != nil {
		t.Fatal(err)
	}
	n, pages := 0, 0
	err := svc.Events.Instances(cal, "series06").TimeMin("2027-03-15T00:00:00Z").TimeMax("2027-06-23T00:00:00Z").MaxResults(40).
		Pages(context.Background(), func(evs *calendar.Events) error {
			pages++
			n += len(evs.Items)
			return nil
		})
	if err != nil || n != 100 || pages != 3 {
		t.Fatalf("instances = %d in %d pages (%v), want 100 in 3", n, pages, err)
	}
}

func TestRecurrenceGoogleRefuses(t *testing.T) {
	_, svc := newService(t)
	for name, rule := range map[string]string{
		"hourly":                 "RRULE:FREQ=HOURLY",
		"minutely":               "RRULE:FREQ=MINUTELY;COUNT=5",
		"no FREQ":                "RRULE:COUNT=5",
		"unknown part":           "RRULE:FREQ=WEEKLY;X-NAME=1",
		"typo":                   "RRULE:FREQ=WEEKLY;UNTL=20270601",
		"COUNT and UNTIL":        "RRULE:FREQ=WEEKLY;COUNT=3;UNTIL=20270601T000000Z",
		"negative COUNT":         "RRULE:FREQ=YEARLY;COUNT=-1",
		"zero INTERVAL":          "RRULE:FREQ=DAILY;INTERVAL=0",
		"floating UNTIL":         "RRULE:FREQ=WEEKLY;UNTIL=20270601T000000",
		"BYWEEKNO in MONTHLY":    "RRULE:FREQ=MONTHLY;BYWEEKNO=3",
		"ordinal BYDAY weekly":   "RRULE:FREQ=WEEKLY;BYDAY=2MO",
		"BYMONTHDAY in WEEKLY":   "RRULE:FREQ=WEEKLY;BYMONTHDAY=3",
		"BYYEARDAY in MONTHLY":   "RRULE:FREQ=MONTHLY;BYYEARDAY=100",
		"BYSETPOS alone":         "RRULE:FREQ=MONTHLY;BYSETPOS=1",
		"bad weekday":            "RRULE:FREQ=WEEKLY;BYDAY=XX",
		"duplicate part":         "RRULE:FREQ=WEEKLY;FREQ=DAILY",
		"BYMONTH out of range":   "RRULE:FREQ=YEARLY;BYMONTH=13",
		"EXDATE not a date":      "EXDATE:tomorrow",
		"EXDATE unknown zone":    "EXDATE;TZID=W. Europe Standard Time:20270322T093000",
		"not a recurrence line":  "DTEND:20270315T100000Z",
		"empty RRULE":            "RRULE:",
		"garbage without a name": "FREQ=WEEKLY",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := svc.Events.Insert(cal, weekly("", rule)).Do()
			gerr := apiErr(t, err, 400, "invalid")
			if gerr.Message != "Invalid recurrence rule." && !strings.Contains(name, "not a recurrence") && !strings.Contains(name, "garbage") {
				t.Errorf("message = %q", gerr.Message)
			}
		})
	}
	// What Google takes.
	for _, rule := range []string{
		"RRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
		"RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU",
		"RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE;WKST=SU;UNTIL=20271231T230000Z",
		"RRULE:FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO",
		"RRULE:FREQ=MONTHLY;BYMONTHDAY=-1",
	} {
		if _, err := svc.Events.Insert(cal, weekly("", rule)).Do(); err != nil {
			t.Errorf("%s: %v", rule, err)
		}
	}
}
