package gcalfake_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	calendar "google.golang.org/api/calendar/v3"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// readingsFake is the emulator under r, with the real client in memory.
func readingsFake(t *testing.T, r gcalfake.Readings) (*gcalfake.Server, *calendar.Service) {
	t.Helper()
	fake := newFake(gcalfake.Options{Seed: 7, Readings: r})
	return fake, memService(t, fake, "alice")
}

func TestReadingsZeroValueIsTheDefault(t *testing.T) {
	const want = "allday=honoured,update=kept,offrule=hidden,props=and,ids=derived,filters=exact,exrule=applied"
	if got := (gcalfake.Readings{}).String(); got != want {
		t.Errorf("zero value = %q, want %q", got, want)
	}
	if gcalfake.AllReadings()[0] != (gcalfake.Readings{}) || gcalfake.CoveringReadings()[0] != (gcalfake.Readings{}) {
		t.Error("the zero value does not come first")
	}
	if got := gcalfake.New(gcalfake.Options{}).Readings(); got != (gcalfake.Readings{}) {
		t.Errorf("a new server's readings = %v", got)
	}
}

func TestAllReadingsIsTheCrossProduct(t *testing.T) {
	all := gcalfake.AllReadings()
	if len(all) != 3*3*2*2*2*2*3 {
		t.Fatalf("%d combinations, want 432", len(all))
	}
	names := map[string]bool{}
	for _, r := range all {
		name := r.String()
		if names[name] {
			t.Errorf("%s twice", name)
		}
		names[name] = true
		back, err := gcalfake.ParseReadings(name)
		if err != nil || back != r {
			t.Errorf("ParseReadings(%q) = %v, %v", name, back, err)
		}
		if strings.ContainsAny(name, " /") {
			t.Errorf("%q is no usable subtest name", name)
		}
	}
}

func TestCoveringReadingsHoldEveryValue(t *testing.T) {
	cover := gcalfake.CoveringReadings()
	if len(cover) != 3 {
		t.Errorf("%d combinations, want 3 (the most values a switch has)", len(cover))
	}
	// Every name=value that appears anywhere in the cross product appears
	// in the covering set.
	seen := map[string]bool{}
	for _, r := range cover {
		for _, part := range strings.Split(r.String(), ",") {
			seen[part] = true
		}
	}
	for _, r := range gcalfake.AllReadings() {
		for _, part := range strings.Split(r.String(), ",") {
			if !seen[part] {
				t.Errorf("%s is in no covering combination", part)
			}
		}
	}
}

func TestParseReadings(t *testing.T) {
	tests := []struct {
		in      string
		want    gcalfake.Readings
		wantErr string
	}{
		{"", gcalfake.Readings{}, ""},
		{"ids=opaque, filters=loose", gcalfake.Readings{InstanceIDs: gcalfake.InstanceIDsOpaque, Filters: gcalfake.FiltersLoose}, ""},
		{"allday=rejected,update=dropped,offrule=kept,props=or", gcalfake.Readings{
			AllDayOriginalStart: gcalfake.OriginalStartRejected, SeriesUpdate: gcalfake.ExceptionsDropped,
			OffRule: gcalfake.OffRuleKept, PropertyRepeats: gcalfake.PropertiesOr}, ""},
		{"allday", gcalfake.Readings{}, "not name=value"},
		{"colour=red", gcalfake.Readings{}, `unknown switch "colour"`},
		{"ids=opaque,ids=derived", gcalfake.Readings{}, "ids given twice"},
		{"update=rewritten", gcalfake.Readings{}, "update takes kept, propagated, dropped"},
		{"exrule=rejected", gcalfake.Readings{ExRule: gcalfake.ExRuleRejected}, ""},
		{"exrule=dropped", gcalfake.Readings{}, "exrule takes applied, ignored, rejected"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := gcalfake.ParseReadings(tt.in)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
			case got != tt.want:
				t.Errorf("= %v, want %v", got, tt.want)
			}
		})
	}
}

// TestEveryReadingShowsWhatItLists runs one scenario under every
// combination and checks what must hold under all of them: every instance
// a listing gives is addressable by its id, and the unfiltered listings
// show exactly what Agenda says a person sees.
func TestEveryReadingShowsWhatItLists(t *testing.T) {
	for _, r := range gcalfake.AllReadings() {
		t.Run(r.String(), func(t *testing.T) {
			fake, svc := readingsFake(t, r)
			master, err := svc.Events.Insert(cal, weekly("series90", "RRULE:FREQ=WEEKLY;COUNT=5")).Do()
			if err != nil {
				t.Fatal(err)
			}
			allDay := &calendar.Event{Id: "bins0090", Summary: "Bins", Recurrence: []string{"RRULE:FREQ=WEEKLY;COUNT=3"},
				Start: &calendar.EventDateTime{Date: "2027-03-17"}, End: &calendar.EventDateTime{Date: "2027-03-18"}}
			if _, err := svc.Events.Insert(cal, allDay).Do(); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Events.Insert(cal, timed("single90", "One-off")).Do(); err != nil {
				t.Fatal(err)
			}
			in := listInstances(t, svc.Events.Instances(cal, "series90"))
			if len(in) != 5 {
				t.Fatalf("%d instances, want 5", len(in))
			}
			for _, ev := range in {
				got, err := svc.Events.Get(cal, ev.Id).Do()
				if err != nil || got.RecurringEventId != "series90" || got.OriginalStartTime.DateTime != ev.OriginalStartTime.DateTime {
					t.Fatalf("get %s = %+v, %v", ev.Id, got, err)
				}
			}
			moved := in[1]
			moved.Summary = "Moved"
			moved.Start.DateTime, moved.End.DateTime = "2027-03-23T14:00:00+01:00", "2027-03-23T14:30:00+01:00"
			if _, err := svc.Events.Update(cal, moved.Id, moved).Do(); err != nil {
				t.Fatal(err)
			}
			if err := svc.Events.Delete(cal, in[2].Id).Do(); err != nil {
				t.Fatal(err)
			}
			master.Summary = "Renamed"
			master.End.DateTime = "2027-03-15T10:15:00+01:00"
			// The moved instance's original start leaves the rule.
			master.Recurrence = []string{"RRULE:FREQ=WEEKLY;COUNT=4", "EXDATE;TZID=Europe/Berlin:20270322T093000"}
			if _, err := svc.Events.Update(cal, "series90", master).Do(); err != nil {
				t.Fatal(err)
			}

			var listed []string
			err = svc.Events.List(cal).SingleEvents(true).OrderBy("startTime").MaxResults(2).Pages(context.Background(), func(evs *calendar.Events) error {
				for _, ev := range evs.Items {
					listed = append(listed, sight(ev))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var seen, seenSeries []string
			for _, o := range fake.Agenda(cal, day("2027-01-01"), day("2028-01-01")) {
				seen = append(seen, o.EventID+" "+o.String())
				if o.SeriesID == "series90" {
					seenSeries = append(seenSeries, o.EventID+" "+o.String())
				}
			}
			slices.Sort(listed)
			slices.Sort(seen)
			if !slices.Equal(listed, seen) {
				t.Errorf("events.list with singleEvents:\n  %s\nAgenda:\n  %s", strings.Join(listed, "\n  "), strings.Join(seen, "\n  "))
			}
			var instances []string
			for _, ev := range listInstances(t, svc.Events.Instances(cal, "series90")) {
				instances = append(instances, sight(ev))
			}
			slices.Sort(instances)
			slices.Sort(seenSeries)
			if !slices.Equal(instances, seenSeries) {
				t.Errorf("events.instances:\n  %s\nAgenda:\n  %s", strings.Join(instances, "\n  "), strings.Join(seenSeries, "\n  "))
			}
		})
	}
}

// listInstances pages through an events.instances call.
func listInstances(t *testing.T, call *calendar.EventsInstancesCall) []*calendar.Event {
	t.Helper()
	var out []*calendar.Event
	if err := call.Pages(context.Background(), func(evs *calendar.Events) error {
		out = append(out, evs.Items...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// sight renders an event as Agenda's "EventID Occurrence.String()".
func sight(ev *calendar.Event) string {
	return fmt.Sprintf("%s %s", ev.Id, gcalfake.Occurrence{Summary: ev.Summary, Start: mustTime(ev.Start), End: mustTime(ev.End), AllDay: ev.Start.Date != ""})
}

func ExampleAllReadings() {
	for _, r := range gcalfake.CoveringReadings() {
		fmt.Println(r)
	}
	fmt.Println(len(gcalfake.AllReadings()), "combinations in all")
	// Output:
	// allday=honoured,update=kept,offrule=hidden,props=and,ids=derived,filters=exact,exrule=applied
	// allday=ignored,update=propagated,offrule=kept,props=or,ids=opaque,filters=loose,exrule=ignored
	// allday=rejected,update=dropped,offrule=hidden,props=and,ids=derived,filters=exact,exrule=rejected
	// 432 combinations in all
}
