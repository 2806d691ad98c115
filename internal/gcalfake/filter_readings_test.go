package gcalfake_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

func withProps(id string, private, shared map[string]string) *calendar.Event {
	ev := timed(id, id)
	ev.ExtendedProperties = &calendar.EventExtendedProperties{Private: private, Shared: shared}
	return ev
}

func ids(evs []*calendar.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Id)
	}
	return out
}

func TestPropertyRepeatReadings(t *testing.T) {
	k1, k2, both := map[string]string{"k1": "a"}, map[string]string{"k2": "b"}, map[string]string{"k1": "a", "k2": "b"}
	sx := map[string]string{"s": "x"}
	events := []*calendar.Event{
		withProps("propa0001", k1, nil), withProps("propb0001", k2, nil), withProps("propc0001", both, nil),
		withProps("propd0001", nil, nil), withProps("prope0001", k1, sx), withProps("propf0001", k2, sx),
		withProps("propg0001", map[string]string{"k1": "b", "k2": "a"}, nil),
	}
	queries := []struct {
		name            string
		private, shared []string
		and, or         []string
	}{
		{"two private", []string{"k1=a", "k2=b"}, nil,
			[]string{"propc0001"}, []string{"propa0001", "propb0001", "propc0001", "prope0001", "propf0001"}},
		{"two private and a shared", []string{"k1=a", "k2=b"}, []string{"s=x"},
			nil, []string{"prope0001", "propf0001"}},
		{"one private", []string{"k1=a"}, nil,
			[]string{"propa0001", "propc0001", "prope0001"}, []string{"propa0001", "propc0001", "prope0001"}},
		{"two shared", nil, []string{"s=x", "s=y"},
			nil, []string{"prope0001", "propf0001"}},
	}
	for _, reading := range []gcalfake.PropertyRepeats{gcalfake.PropertiesAnd, gcalfake.PropertiesOr} {
		t.Run(reading.String(), func(t *testing.T) {
			_, svc := readingsFake(t, gcalfake.Readings{PropertyRepeats: reading})
			for _, ev := range events {
				if _, err := svc.Events.Insert(cal, ev).Do(); err != nil {
					t.Fatal(err)
				}
			}
			for _, q := range queries {
				call := svc.Events.List(cal)
				if q.private != nil {
					call = call.PrivateExtendedProperty(q.private...)
				}
				if q.shared != nil {
					call = call.SharedExtendedProperty(q.shared...)
				}
				got, err := call.Do()
				if err != nil {
					t.Fatal(err)
				}
				want := q.and
				if reading == gcalfake.PropertiesOr {
					want = q.or
				}
				sameList(t, q.name, ids(got.Items), want)
			}
		})
	}
}

// filterWorld is a calendar with six single events on consecutive days
// from 11 January 2027 (uid-N, the even ones owned, the last deleted) and
// a daily series of 30 from the same day (owned, 20 January cancelled).
func filterWorld(t *testing.T, svc *calendar.Service) {
	t.Helper()
	for i := range 6 {
		d := time.Date(2027, 1, 11+i, 10, 0, 0, 0, time.UTC)
		ev := &calendar.Event{Id: fmt.Sprintf("evt%05d", i), Summary: fmt.Sprint("single ", i), ICalUID: fmt.Sprintf("uid-%d@example.com", i),
			Start: &calendar.EventDateTime{DateTime: d.Format(time.RFC3339)}, End: &calendar.EventDateTime{DateTime: d.Add(time.Hour).Format(time.RFC3339)}}
		if i%2 == 0 {
			ev.ExtendedProperties = &calendar.EventExtendedProperties{Private: map[string]string{"calsyncd_sub": "team"}}
		}
		if _, err := svc.Events.Insert(cal, ev).Do(); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Events.Delete(cal, "evt00005").Do(); err != nil {
		t.Fatal(err)
	}
	daily := &calendar.Event{Id: "stand001", Summary: "Stand-up", Recurrence: []string{"RRULE:FREQ=DAILY;COUNT=30"},
		Start:              &calendar.EventDateTime{DateTime: "2027-01-11T09:00:00+01:00", TimeZone: "Europe/Berlin"},
		End:                &calendar.EventDateTime{DateTime: "2027-01-11T09:15:00+01:00", TimeZone: "Europe/Berlin"},
		ExtendedProperties: &calendar.EventExtendedProperties{Private: map[string]string{"calsyncd_sub": "team"}}}
	if _, err := svc.Events.Insert(cal, daily).Do(); err != nil {
		t.Fatal(err)
	}
	// A loose filter answers more than the instance asked for.
	for _, in := range listInstances(t, svc.Events.Instances(cal, "stand001").OriginalStart("2027-01-20T09:00:00+01:00")) {
		if in.OriginalStartTime.DateTime != "2027-01-20T09:00:00+01:00" {
			continue
		}
		if err := svc.Events.Delete(cal, in.Id).Do(); err != nil {
			t.Fatal(err)
		}
	}
}

func inWindow(lo, hi string) func(*calendar.Event) bool {
	l, _ := time.Parse(time.RFC3339, lo)
	h, _ := time.Parse(time.RFC3339, hi)
	return func(ev *calendar.Event) bool {
		return len(ev.Recurrence) > 0 || mustTime(ev.Start).Before(h) && mustTime(ev.End).After(l)
	}
}

func TestLooseFilterReadings(t *testing.T) {
	list := func(svc *calendar.Service, max int64, edit func(*calendar.EventsListCall) *calendar.EventsListCall) ([]*calendar.Event, error) {
		var out []*calendar.Event
		err := edit(svc.Events.List(cal).MaxResults(max)).Pages(context.Background(), func(evs *calendar.Events) error {
			out = append(out, evs.Items...)
			return nil
		})
		return out, err
	}
	instances := func(svc *calendar.Service, max int64, edit func(*calendar.EventsInstancesCall) *calendar.EventsInstancesCall) ([]*calendar.Event, error) {
		var out []*calendar.Event
		err := edit(svc.Events.Instances(cal, "stand001").MaxResults(max)).Pages(context.Background(), func(evs *calendar.Events) error {
			out = append(out, evs.Items...)
			return nil
		})
		return out, err
	}
	const lo, hi = "2027-01-14T00:00:00Z", "2027-01-16T00:00:00Z"
	queries := []struct {
		name  string
		run   func(svc *calendar.Service, max int64) ([]*calendar.Event, error)
		match func(*calendar.Event) bool
		want  int
	}{
		{"list by iCalUID", func(svc *calendar.Service, max int64) ([]*calendar.Event, error) {
			return list(svc, max, func(c *calendar.EventsListCall) *calendar.EventsListCall { return c.ICalUID("uid-1@example.com") })
		}, func(ev *calendar.Event) bool { return ev.ICalUID == "uid-1@example.com" }, 1},
		{"list by private property", func(svc *calendar.Service, max int64) ([]*calendar.Event, error) {
			return list(svc, max, func(c *calendar.EventsListCall) *calendar.EventsListCall {
				return c.PrivateExtendedProperty("calsyncd_sub=team")
			})
		}, func(ev *calendar.Event) bool {
			return ev.ExtendedProperties != nil && ev.ExtendedProperties.Private["calsyncd_sub"] == "team"
		}, 4},
		{"list single events in a window", func(svc *calendar.Service, max int64) ([]*calendar.Event, error) {
			return list(svc, max, func(c *calendar.EventsListCall) *calendar.EventsListCall {
				return c.SingleEvents(true).OrderBy("startTime").TimeMin(lo).TimeMax(hi)
			})
		}, inWindow(lo, hi), 4},
		{"list events in a window", func(svc *calendar.Service, max int64) ([]*calendar.Event, error) {
			return list(svc, max, func(c *calendar.EventsListCall) *calendar.EventsListCall { return c.TimeMin(lo).TimeMax(hi) })
		}, inWindow(lo, hi), 3},
		{"instances by original start", func(svc *calendar.Service, max int64) ([]*calendar.Event, error) {
			return instances(svc, max, func(c *calendar.EventsInstancesCall) *calendar.EventsInstancesCall {
				return c.OriginalStart("2027-01-15T09:00:00+01:00")
			})
		}, func(ev *calendar.Event) bool { return ev.OriginalStartTime.DateTime == "2027-01-15T09:00:00+01:00" }, 1},
		{"instances in a window", func(svc *calendar.Service, max int64) ([]*calendar.Event, error) {
			return instances(svc, max, func(c *calendar.EventsInstancesCall) *calendar.EventsInstancesCall {
				return c.TimeMin("2027-01-20T00:00:00Z").TimeMax("2027-01-23T00:00:00Z")
			})
		}, inWindow("2027-01-20T00:00:00Z", "2027-01-23T00:00:00Z"), 2},
		{"list without a filter", func(svc *calendar.Service, max int64) ([]*calendar.Event, error) {
			return list(svc, max, func(c *calendar.EventsListCall) *calendar.EventsListCall { return c })
		}, func(*calendar.Event) bool { return true }, 6},
	}
	for _, reading := range []gcalfake.Filters{gcalfake.FiltersExact, gcalfake.FiltersLoose} {
		t.Run(reading.String(), func(t *testing.T) {
			_, svc := readingsFake(t, gcalfake.Readings{Filters: reading})
			filterWorld(t, svc)
			for _, q := range queries {
				got, err := q.run(svc, 250)
				if err != nil {
					t.Fatalf("%s: %v", q.name, err)
				}
				var matched, extra []string
				for _, ev := range got {
					if ev.Status == "cancelled" {
						t.Errorf("%s: cancelled %s without showDeleted", q.name, ev.Id)
					}
					if q.match(ev) {
						matched = append(matched, ev.Id)
					} else {
						extra = append(extra, gcalfake.String(ev))
					}
				}
				if len(matched) != q.want {
					t.Errorf("%s: %d matching items %v, want %d", q.name, len(matched), matched, q.want)
				}
				if len(extra) > 0 {
					t.Logf("%s: also let through %q", q.name, extra)
				}
				wantExtra := reading == gcalfake.FiltersLoose && q.name != "list without a filter"
				if wantExtra != (len(extra) > 0) || len(extra) > 3 {
					t.Errorf("%s: items that fail the filter: %q", q.name, extra)
				}
				// The answer is the same on a repeat and across pages.
				again, err := q.run(svc, 2)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ids(got), ids(again)) {
					t.Errorf("%s: %v, then in pages of two %v", q.name, ids(got), ids(again))
				}
			}
		})
	}
}
