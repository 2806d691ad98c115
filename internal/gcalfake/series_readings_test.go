package gcalfake_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func mustTime(dt *calendar.EventDateTime) time.Time {
	if dt.Date != "" {
		return day(dt.Date)
	}
	t, err := time.Parse(time.RFC3339, dt.DateTime)
	if err != nil {
		panic(err)
	}
	return t
}

// originals renders the original starts of instances.
func originals(evs []*calendar.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.OriginalStartTime.Date+ev.OriginalStartTime.DateTime)
	}
	return out
}

// seen renders what a person sees in March and April 2027, with the place
// and the description.
func seen(fake *gcalfake.Server) []string {
	var out []string
	for _, o := range fake.Agenda(cal, day("2027-03-01"), day("2027-05-01")) {
		out = append(out, o.String()+" @"+o.Location+" "+o.Description)
	}
	return out
}

func sameList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s =\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestAllDayOriginalStartReadings(t *testing.T) {
	tests := []struct {
		reading gcalfake.AllDayOriginalStart
		// want are the original starts listed for 2027-01-20, and with
		// showDeleted; empty for a 400 invalid.
		want, withDeleted []string
	}{
		{gcalfake.OriginalStartHonoured, []string{"2027-01-20"}, []string{"2027-01-20"}},
		{gcalfake.OriginalStartIgnored, []string{"2027-01-06", "2027-01-20", "2027-01-27"}, []string{"2027-01-06", "2027-01-13", "2027-01-20", "2027-01-27"}},
		{gcalfake.OriginalStartRejected, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.reading.String(), func(t *testing.T) {
			_, svc := readingsFake(t, gcalfake.Readings{AllDayOriginalStart: tt.reading})
			bins := &calendar.Event{Id: "bins0001", Summary: "Bins", Recurrence: []string{"RRULE:FREQ=WEEKLY;COUNT=4"},
				Start: &calendar.EventDateTime{Date: "2027-01-06"}, End: &calendar.EventDateTime{Date: "2027-01-07"}}
			if _, err := svc.Events.Insert(cal, bins).Do(); err != nil {
				t.Fatal(err)
			}
			if err := svc.Events.Delete(cal, "bins0001_20270113").Do(); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Events.Insert(cal, weekly("series01", "RRULE:FREQ=WEEKLY;COUNT=4")).Do(); err != nil {
				t.Fatal(err)
			}
			call := func() *calendar.EventsInstancesCall {
				return svc.Events.Instances(cal, "bins0001").OriginalStart("2027-01-20").MaxResults(2)
			}
			if tt.want == nil {
				_, err := call().Do()
				gerr := apiErr(t, err, 400, "invalid")
				if !strings.Contains(gerr.Body, `"locationType":"parameter","location":"originalStart"`) {
					t.Errorf("error body = %s, want location parameter originalStart", gerr.Body)
				}
			} else {
				sameList(t, "instances", originals(listInstances(t, call())), tt.want)
				sameList(t, "instances with showDeleted", originals(listInstances(t, call().ShowDeleted(true))), tt.withDeleted)
				// maxResults holds: the first page is two long.
				if page, err := call().Do(); err != nil || len(page.Items) > 2 || (len(tt.want) > 2) != (page.NextPageToken != "") {
					t.Errorf("first page = %d items, next %q, %v", len(page.Items), page.NextPageToken, err)
				}
			}
			// The RFC 3339 forms are honoured under every reading.
			sameList(t, "all-day instance by date-time", originals(listInstances(t, svc.Events.Instances(cal, "bins0001").OriginalStart("2027-01-20T00:00:00Z"))), []string{"2027-01-20"})
			sameList(t, "timed instance", originals(listInstances(t, svc.Events.Instances(cal, "series01").OriginalStart("2027-03-22T09:30:00+01:00"))), []string{"2027-03-22T09:30:00+01:00"})
		})
	}
}

// seriesWithExceptions is a Monday 09:30-10:00 Berlin series from 15 March
// 2027, four weeks, in room 1 with description v1, whose second instance
// is moved to Tuesday 14:00 and retitled, third cancelled, and fourth
// retitled in place with a private property of its own.
func seriesWithExceptions(t *testing.T, fake *gcalfake.Server, svc *calendar.Service) *calendar.Event {
	t.Helper()
	// The EXDATE excludes no occurrence: it gives the recurrence two lines.
	ev := weekly("series10", "RRULE:FREQ=WEEKLY;COUNT=4", "EXDATE;TZID=Europe/Berlin:20270412T093000")
	ev.Location, ev.Description = "Room 1", "v1"
	ev.ExtendedProperties = &calendar.EventExtendedProperties{Private: map[string]string{"feed": "team", "h": "1"}}
	master, err := svc.Events.Insert(cal, ev).Do()
	if err != nil {
		t.Fatal(err)
	}
	in := listInstances(t, svc.Events.Instances(cal, "series10"))
	moved := in[1]
	moved.Summary = "Moved"
	moved.Start.DateTime, moved.End.DateTime = "2027-03-23T14:00:00+01:00", "2027-03-23T14:30:00+01:00"
	if _, err := svc.Events.Update(cal, moved.Id, moved).Do(); err != nil {
		t.Fatal(err)
	}
	if err := svc.Events.Delete(cal, in[2].Id).Do(); err != nil {
		t.Fatal(err)
	}
	last := in[3]
	last.Summary = "Last"
	last.ExtendedProperties.Private = map[string]string{"feed": "team", "h": "x"}
	if _, err := svc.Events.Update(cal, last.Id, last).Do(); err != nil {
		t.Fatal(err)
	}
	return master
}

// seriesUpdate is one update of seriesWithExceptions and what follows
// under each SeriesUpdate reading.
type seriesUpdate struct {
	name   string
	update func(t *testing.T, fake *gcalfake.Server, svc *calendar.Service, master *calendar.Event)
	want   map[gcalfake.SeriesUpdate][]string
	// lastFeed is the fourth instance's "feed" property afterwards.
	lastFeed map[gcalfake.SeriesUpdate]string
	// movedKept: whether the moved exception is still stored.
	movedKept map[gcalfake.SeriesUpdate]bool
}

const (
	kept = gcalfake.ExceptionsKept
	prop = gcalfake.ExceptionsPropagated
	drop = gcalfake.ExceptionsDropped
)

func seriesUpdates() []seriesUpdate {
	as := map[string]string{
		"15":      `2027-03-15T08:30:00Z..2027-03-15T09:00:00Z "Team sync" @Room 1 v1`,
		"moved":   `2027-03-23T13:00:00Z..2027-03-23T13:30:00Z "Moved" @Room 1 v1`,
		"last":    `2027-04-05T07:30:00Z..2027-04-05T08:00:00Z "Last" @Room 1 v1`,
		"22":      `2027-03-22T08:30:00Z..2027-03-22T09:00:00Z "Team sync" @Room 1 v1`,
		"29":      `2027-03-29T07:30:00Z..2027-03-29T08:00:00Z "Team sync" @Room 1 v1`,
		"05":      `2027-04-05T07:30:00Z..2027-04-05T08:00:00Z "Team sync" @Room 1 v1`,
		"08":      `2027-03-08T08:30:00Z..2027-03-08T09:00:00Z "Team sync" @Room 1 v1`,
		"15 long": `2027-03-15T08:30:00Z..2027-03-15T09:30:00Z "Team sync" @Room 1 v1`,
		"22 long": `2027-03-22T08:30:00Z..2027-03-22T09:30:00Z "Team sync" @Room 1 v1`,
		"29 long": `2027-03-29T07:30:00Z..2027-03-29T08:30:00Z "Team sync" @Room 1 v1`,
		"05 long": `2027-04-05T07:30:00Z..2027-04-05T08:30:00Z "Team sync" @Room 1 v1`,
		"last 60": `2027-04-05T07:30:00Z..2027-04-05T08:30:00Z "Last" @Room 1 v1`,
		"15 new":  `2027-03-15T08:30:00Z..2027-03-15T09:00:00Z "Renamed" @Room 2 v2`,
		"moved 2": `2027-03-23T13:00:00Z..2027-03-23T13:30:00Z "Moved" @Room 2 v2`,
		"last 2":  `2027-04-05T07:30:00Z..2027-04-05T08:00:00Z "Last" @Room 2 v2`,
		"15 late": `2027-03-15T09:30:00Z..2027-03-15T10:00:00Z "Team sync" @Room 1 v1`,
		"22 late": `2027-03-22T09:30:00Z..2027-03-22T10:00:00Z "Team sync" @Room 1 v1`,
		"29 late": `2027-03-29T08:30:00Z..2027-03-29T09:00:00Z "Team sync" @Room 1 v1`,
		"05 late": `2027-04-05T08:30:00Z..2027-04-05T09:00:00Z "Team sync" @Room 1 v1`,
	}
	return []seriesUpdate{{
		name: "update retitles and moves to room 2",
		update: func(t *testing.T, _ *gcalfake.Server, svc *calendar.Service, m *calendar.Event) {
			m.Summary, m.Location, m.Description = "Renamed", "Room 2", "v2"
			m.ExtendedProperties.Private = map[string]string{"feed": "team2", "h": "2"}
			if _, err := svc.Events.Update(cal, m.Id, m).Do(); err != nil {
				t.Fatal(err)
			}
		},
		want: map[gcalfake.SeriesUpdate][]string{
			kept: {as["15 new"], as["moved"], as["last"]},
			prop: {as["15 new"], as["moved 2"], as["last 2"]},
			drop: {as["15 new"], as["moved"], as["last"]},
		},
		lastFeed:  map[gcalfake.SeriesUpdate]string{kept: "team", prop: "team2", drop: "team"},
		movedKept: map[gcalfake.SeriesUpdate]bool{kept: true, prop: true, drop: true},
	}, {
		name: "patch makes it an hour long",
		update: func(t *testing.T, _ *gcalfake.Server, svc *calendar.Service, m *calendar.Event) {
			patch := &calendar.Event{End: &calendar.EventDateTime{DateTime: "2027-03-15T10:30:00+01:00", TimeZone: "Europe/Berlin"}}
			if _, err := svc.Events.Patch(cal, m.Id, patch).Do(); err != nil {
				t.Fatal(err)
			}
		},
		want: map[gcalfake.SeriesUpdate][]string{
			kept: {as["15 long"], as["moved"], as["last"]},
			prop: {as["15 long"], as["moved"], as["last 60"]},
			drop: {as["15 long"], as["22 long"], as["29 long"], as["05 long"]},
		},
		lastFeed:  map[gcalfake.SeriesUpdate]string{kept: "team", prop: "team", drop: "team"},
		movedKept: map[gcalfake.SeriesUpdate]bool{kept: true, prop: true, drop: false},
	}, {
		name: "update starts it a week earlier",
		update: func(t *testing.T, _ *gcalfake.Server, svc *calendar.Service, m *calendar.Event) {
			m.Start.DateTime, m.End.DateTime = "2027-03-08T09:30:00+01:00", "2027-03-08T10:00:00+01:00"
			m.Recurrence = []string{"RRULE:FREQ=WEEKLY;COUNT=5"}
			if _, err := svc.Events.Update(cal, m.Id, m).Do(); err != nil {
				t.Fatal(err)
			}
		},
		want: map[gcalfake.SeriesUpdate][]string{
			kept: {as["08"], as["15"], as["moved"], as["last"]},
			prop: {as["08"], as["15"], as["moved"], as["last"]},
			drop: {as["08"], as["15"], as["22"], as["29"], as["05"]},
		},
		lastFeed:  map[gcalfake.SeriesUpdate]string{kept: "team", prop: "team", drop: "team"},
		movedKept: map[gcalfake.SeriesUpdate]bool{kept: true, prop: true, drop: false},
	}, {
		name: "a person moves the series an hour later",
		update: func(t *testing.T, fake *gcalfake.Server, _ *calendar.Service, m *calendar.Event) {
			fake.Edit(cal, m.Id, func(ev *calendar.Event) {
				ev.Start.DateTime, ev.End.DateTime = "2027-03-15T10:30:00+01:00", "2027-03-15T11:00:00+01:00"
			})
		},
		// The exceptions are off the new rule and hidden (OffRuleHidden)
		// under every reading; only Dropped forgets them.
		want: map[gcalfake.SeriesUpdate][]string{
			kept: {as["15 late"], as["22 late"], as["29 late"], as["05 late"]},
			prop: {as["15 late"], as["22 late"], as["29 late"], as["05 late"]},
			drop: {as["15 late"], as["22 late"], as["29 late"], as["05 late"]},
		},
		lastFeed:  map[gcalfake.SeriesUpdate]string{kept: "team", prop: "team", drop: ""},
		movedKept: map[gcalfake.SeriesUpdate]bool{kept: true, prop: true, drop: false},
	}, {
		name: "the same times and lines written differently are no change",
		update: func(t *testing.T, _ *gcalfake.Server, svc *calendar.Service, m *calendar.Event) {
			m.Recurrence = []string{m.Recurrence[1], m.Recurrence[0]}
			m.Start.DateTime, m.End.DateTime = "2027-03-15T08:30:00Z", "2027-03-15T09:00:00Z"
			if _, err := svc.Events.Update(cal, m.Id, m).Do(); err != nil {
				t.Fatal(err)
			}
		},
		want: map[gcalfake.SeriesUpdate][]string{
			kept: {as["15"], as["moved"], as["last"]},
			prop: {as["15"], as["moved"], as["last"]},
			drop: {as["15"], as["moved"], as["last"]},
		},
		lastFeed:  map[gcalfake.SeriesUpdate]string{kept: "team", prop: "team", drop: "team"},
		movedKept: map[gcalfake.SeriesUpdate]bool{kept: true, prop: true, drop: true},
	}}
}

func TestSeriesUpdateReadings(t *testing.T) {
	updates := seriesUpdates()
	for _, reading := range []gcalfake.SeriesUpdate{kept, prop, drop} {
		for _, u := range updates {
			t.Run(reading.String()+"/"+u.name, func(t *testing.T) {
				fake, svc := readingsFake(t, gcalfake.Readings{SeriesUpdate: reading})
				master := seriesWithExceptions(t, fake, svc)
				before, err := svc.Events.Get(cal, "series10_20270405T073000Z").Do()
				if err != nil {
					t.Fatal(err)
				}
				u.update(t, fake, svc, master)
				sameList(t, "agenda", seen(fake), u.want[reading])

				last, err := svc.Events.Get(cal, "series10_20270405T073000Z").Do()
				switch {
				case u.lastFeed[reading] == "":
					apiErr(t, err, 404, "notFound")
				case err != nil:
					t.Fatal(err)
				default:
					if got := last.ExtendedProperties.Private["feed"]; got != u.lastFeed[reading] {
						t.Errorf("fourth instance's feed = %q, want %q", got, u.lastFeed[reading])
					}
					if last.Summary == "Last" && last.ExtendedProperties.Private["h"] != "x" {
						t.Errorf("the fourth exception lost its own h: %v", last.ExtendedProperties.Private)
					}
					// A changed exception has a new etag: a writer's
					// If-Match on the old one fails.
					changed := last.Summary != before.Summary || last.Location != before.Location || last.End.DateTime != before.End.DateTime || last.ExtendedProperties.Private["feed"] != before.ExtendedProperties.Private["feed"]
					if changed == (last.Etag == before.Etag) {
						t.Errorf("changed %v but etag %s -> %s", changed, before.Etag, last.Etag)
					}
				}
				moved, err := svc.Events.Get(cal, "series10_20270322T083000Z").Do()
				if kept := err == nil && moved.Summary == "Moved"; kept != u.movedKept[reading] {
					t.Errorf("moved exception stored = %v (%v), want %v", kept, err, u.movedKept[reading])
				}
			})
		}
	}
}

func TestOffRuleReadings(t *testing.T) {
	tests := []struct {
		reading gcalfake.OffRule
		// want is what every view shows, in order of original start.
		want []string
		// shownExceptions are the exceptions listed and in Events.
		shownExceptions int
	}{
		{gcalfake.OffRuleHidden, []string{"Team sync", "Team sync"}, 0},
		{gcalfake.OffRuleKept, []string{"Team sync", "Moved", "Team sync", "Last"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.reading.String(), func(t *testing.T) {
			fake, svc := readingsFake(t, gcalfake.Readings{OffRule: tt.reading})
			master, err := svc.Events.Insert(cal, weekly("series20", "RRULE:FREQ=WEEKLY;COUNT=4")).Do()
			if err != nil {
				t.Fatal(err)
			}
			in := listInstances(t, svc.Events.Instances(cal, "series20"))
			in[1].Summary = "Moved"
			in[1].Start.DateTime, in[1].End.DateTime = "2027-03-23T14:00:00+01:00", "2027-03-23T14:30:00+01:00"
			in[3].Summary = "Last"
			for _, ev := range []*calendar.Event{in[1], in[3]} {
				if _, err := svc.Events.Update(cal, ev.Id, ev).Do(); err != nil {
					t.Fatal(err)
				}
			}
			// The rule loses its last week and the second one.
			master.Recurrence = []string{"RRULE:FREQ=WEEKLY;COUNT=3", "EXDATE;TZID=Europe/Berlin:20270322T093000"}
			if _, err := svc.Events.Update(cal, "series20", master).Do(); err != nil {
				t.Fatal(err)
			}

			titles := func(evs []*calendar.Event) []string {
				var out []string
				for _, ev := range evs {
					out = append(out, ev.Summary)
				}
				return out
			}
			sameList(t, "instances", titles(listInstances(t, svc.Events.Instances(cal, "series20"))), tt.want)
			singles, err := svc.Events.List(cal).SingleEvents(true).OrderBy("startTime").Do()
			if err != nil {
				t.Fatal(err)
			}
			sameList(t, "list with singleEvents", titles(singles.Items), tt.want)
			var agenda []string
			for _, o := range fake.Agenda(cal, day("2027-03-01"), day("2027-05-01")) {
				agenda = append(agenda, o.Summary)
			}
			sameList(t, "agenda", agenda, tt.want)
			stored, err := svc.Events.List(cal).Do()
			if err != nil {
				t.Fatal(err)
			}
			if len(stored.Items) != 1+tt.shownExceptions {
				t.Errorf("list without singleEvents = %d items, want the series and %d exceptions", len(stored.Items), tt.shownExceptions)
			}
			byOriginal, err := svc.Events.Instances(cal, "series20").OriginalStart("2027-04-05T09:30:00+02:00").Do()
			if err != nil {
				t.Fatal(err)
			}
			if got := len(byOriginal.Items); got != tt.shownExceptions/2 {
				t.Errorf("instances at the last week's original start = %d, want %d", got, tt.shownExceptions/2)
			}
			// Either way the exception is still stored and readable.
			if got, err := svc.Events.Get(cal, in[3].Id).Do(); err != nil || got.Summary != "Last" {
				t.Errorf("get the off-rule exception = %+v, %v", got, err)
			}
			if n := len(fake.Events(cal)); n != 1+tt.shownExceptions {
				t.Errorf("Events = %d", n)
			}
		})
	}
}

func TestInstanceIDReadings(t *testing.T) {
	for _, reading := range []gcalfake.InstanceIDs{gcalfake.InstanceIDsDerived, gcalfake.InstanceIDsOpaque} {
		t.Run(reading.String(), func(t *testing.T) {
			fake, svc := readingsFake(t, gcalfake.Readings{InstanceIDs: reading})
			if _, err := svc.Events.Insert(cal, weekly("series30", "RRULE:FREQ=WEEKLY;COUNT=4")).Do(); err != nil {
				t.Fatal(err)
			}
			bins := &calendar.Event{Id: "bins0030", Summary: "Bins", Recurrence: []string{"RRULE:FREQ=WEEKLY;COUNT=2"},
				Start: &calendar.EventDateTime{Date: "2027-01-06"}, End: &calendar.EventDateTime{Date: "2027-01-07"}}
			if _, err := svc.Events.Insert(cal, bins).Do(); err != nil {
				t.Fatal(err)
			}
			derived := []string{"series30_20270315T083000Z", "series30_20270322T083000Z", "series30_20270329T073000Z", "series30_20270405T073000Z", "bins0030_20270106", "bins0030_20270113"}
			listed := append(listInstances(t, svc.Events.Instances(cal, "series30")), listInstances(t, svc.Events.Instances(cal, "bins0030"))...)
			var ids []string
			for _, ev := range listed {
				ids = append(ids, ev.Id)
			}
			again := append(listInstances(t, svc.Events.Instances(cal, "series30")), listInstances(t, svc.Events.Instances(cal, "bins0030"))...)
			for i, ev := range again {
				if ev.Id != ids[i] {
					t.Errorf("instance %d is %s, then %s", i, ids[i], ev.Id)
				}
			}
			if reading == gcalfake.InstanceIDsDerived {
				sameList(t, "ids", ids, derived)
				// Derived ids are addressable before anything is stored.
				if err := svc.Events.Delete(cal, derived[2]).Do(); err != nil {
					t.Fatal(err)
				}
			} else {
				for i, id := range ids {
					if strings.HasPrefix(id, "series30") || strings.HasPrefix(id, "bins0030") || strings.Contains(id, "_") || len(id) != 26 {
						t.Errorf("opaque id %q", id)
					}
					_, err := svc.Events.Get(cal, derived[i]).Do()
					apiErr(t, err, 404, "notFound")
					_, err = svc.Events.Update(cal, derived[i], timed("", "x")).Do()
					apiErr(t, err, 404, "notFound")
					apiErr(t, svc.Events.Delete(cal, derived[i]).Do(), 404, "notFound")
				}
				if err := svc.Events.Delete(cal, ids[2]).Do(); err != nil {
					t.Fatal(err)
				}
			}
			// Every listed id reads, writes and deletes its instance.
			got, err := svc.Events.Get(cal, ids[1]).Do()
			if err != nil || got.RecurringEventId != "series30" || got.OriginalStartTime.DateTime != "2027-03-22T09:30:00+01:00" {
				t.Fatalf("get %s = %+v, %v", ids[1], got, err)
			}
			got.Summary = "Moved"
			exc, err := svc.Events.Update(cal, ids[1], got).Do()
			if err != nil || exc.Id != ids[1] {
				t.Fatalf("update %s = %+v, %v", ids[1], exc, err)
			}
			if err := svc.Events.Delete(cal, ids[5]).Do(); err != nil {
				t.Fatal(err)
			}
			after := listInstances(t, svc.Events.Instances(cal, "series30").ShowDeleted(true))
			if after[1].Id != ids[1] || after[1].Summary != "Moved" || after[2].Id != ids[2] || after[2].Status != "cancelled" {
				t.Errorf("after the writes: %s, %s", gcalfake.String(after[1]), gcalfake.String(after[2]))
			}
			// The inspection helpers know both forms.
			if id := fake.InstanceID(cal, "series30", mustTime(&calendar.EventDateTime{DateTime: "2027-04-05T09:30:00+02:00"})); id != ids[3] {
				t.Errorf("InstanceID = %q, want %q", id, ids[3])
			}
			if id := fake.InstanceID(cal, "bins0030", day("2027-01-13")); id != ids[5] {
				t.Errorf("InstanceID of the cancelled all-day instance = %q, want %q", id, ids[5])
			}
			if id := fake.InstanceID(cal, "series30", day("2027-04-06")); id != "" {
				t.Errorf("InstanceID of no instance = %q", id)
			}
			fake.Edit(cal, derived[3], func(ev *calendar.Event) { ev.Summary = "Last" })
			// An exception stored under the listed id is the one its
			// derived id reaches too.
			stored := len(fake.AllEvents(cal))
			fake.Edit(cal, derived[1], func(ev *calendar.Event) { ev.Location = "Room 9" })
			if got := listInstances(t, svc.Events.Instances(cal, "series30")); got[1].Id != ids[1] || got[1].Location != "Room 9" || len(fake.AllEvents(cal)) != stored {
				t.Errorf("after editing by the derived id: %s, %d stored, want %d", gcalfake.String(got[1]), len(fake.AllEvents(cal)), stored)
			}
			var agenda []string
			for _, o := range fake.Agenda(cal, day("2027-01-01"), day("2027-05-01")) {
				agenda = append(agenda, fmt.Sprintf("%s %s %s", o.EventID, o.SeriesID, o.OriginalStart.Format("0102")))
			}
			want := []string{ids[4] + " bins0030 0106", ids[0] + " series30 0315", ids[1] + " series30 0322", ids[3] + " series30 0405"}
			sameList(t, "agenda ids", agenda, want)
		})
	}
}

func TestOpaqueIDsFollowTheSeed(t *testing.T) {
	idOf := func(seed uint64) string {
		fake := newFake(gcalfake.Options{Seed: seed, Readings: gcalfake.Readings{InstanceIDs: gcalfake.InstanceIDsOpaque}})
		svc := memService(t, fake, "alice")
		if _, err := svc.Events.Insert(cal, weekly("series31", "RRULE:FREQ=WEEKLY;COUNT=2")).Do(); err != nil {
			t.Fatal(err)
		}
		return listInstances(t, svc.Events.Instances(cal, "series31"))[0].Id
	}
	if a, b, c := idOf(1), idOf(1), idOf(2); a != b || a == c {
		t.Errorf("seed 1: %s and %s; seed 2: %s", a, b, c)
	}
}

func TestReadingsChangeAtRuntime(t *testing.T) {
	fake, svc := readingsFake(t, gcalfake.Readings{})
	if _, err := svc.Events.Insert(cal, weekly("series40", "RRULE:FREQ=WEEKLY;COUNT=3")).Do(); err != nil {
		t.Fatal(err)
	}
	fake.Edit(cal, "series40_20270322T083000Z", func(ev *calendar.Event) { ev.Summary = "Moved" })
	fake.SetReadings(gcalfake.Readings{InstanceIDs: gcalfake.InstanceIDsOpaque, AllDayOriginalStart: gcalfake.OriginalStartRejected})
	if got := fake.Readings().String(); got != "allday=rejected,update=kept,offrule=hidden,props=and,ids=opaque,filters=exact,exrule=applied" {
		t.Errorf("Readings() = %s", got)
	}
	in := listInstances(t, svc.Events.Instances(cal, "series40"))
	if len(in) != 3 || in[1].Id != "series40_20270322T083000Z" || in[1].Summary != "Moved" || strings.HasPrefix(in[0].Id, "series40") {
		t.Fatalf("instances after switching to opaque ids: %v", in)
	}
	// The stored exception is still the one its instance's new id reaches.
	fake.Edit(cal, "series40_20270322T083000Z", func(ev *calendar.Event) { ev.Location = "Room 9" })
	if got := listInstances(t, svc.Events.Instances(cal, "series40")); got[1].Location != "Room 9" || len(fake.AllEvents(cal)) != 2 {
		t.Errorf("after editing by the derived id: %s, %d stored", gcalfake.String(got[1]), len(fake.AllEvents(cal)))
	}
	_, err := svc.Events.Instances(cal, "series40").OriginalStart("2027-03-22").Do()
	apiErr(t, err, 400, "invalid")
}
