package gcalfake_test

import (
	"slices"
	"testing"

	calendar "google.golang.org/api/calendar/v3"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// instanceDays are the dates of a series' instances, as events.instances
// lists them.
func instanceDays(t *testing.T, svc *calendar.Service, id string) []string {
	t.Helper()
	var out []string
	for _, in := range listInstances(t, svc.Events.Instances(cal, id)) {
		out = append(out, in.Start.DateTime[:10])
	}
	return out
}

// TestExRuleReadings: a weekly series of six Mondays from 15 March 2027
// with every other week excluded by an EXRULE, written and shown under
// each ExRule reading.
func TestExRuleReadings(t *testing.T) {
	every := []string{"2027-03-15", "2027-03-22", "2027-03-29", "2027-04-05", "2027-04-12", "2027-04-19"}
	tests := []struct {
		reading gcalfake.ExRule
		// rejected: insert answers 400; want are the instances otherwise.
		rejected bool
		want     []string
	}{
		// The rule produces DTSTART, so DTSTART goes too.
		{gcalfake.ExRuleApplied, false, []string{"2027-03-22", "2027-04-05", "2027-04-19"}},
		{gcalfake.ExRuleIgnored, false, every},
		{gcalfake.ExRuleRejected, true, nil},
	}
	for _, tt := range tests {
		r := gcalfake.Readings{ExRule: tt.reading}
		t.Run(r.String(), func(t *testing.T) {
			fake, svc := readingsFake(t, r)
			ev := weekly("series70", "RRULE:FREQ=WEEKLY;COUNT=6", "EXRULE:FREQ=WEEKLY;INTERVAL=2")
			_, err := svc.Events.Insert(cal, ev).Do()
			if tt.rejected {
				if gerr := apiErr(t, err, 400, "invalid"); gerr.Message != "Invalid recurrence rule." {
					t.Errorf("message %q", gerr.Message)
				}
				if got := agenda(fake, "2027-03-01", "2027-05-01"); len(got) != 0 {
					t.Errorf("a refused insert shows %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := instanceDays(t, svc, "series70"); !slices.Equal(got, tt.want) {
				t.Errorf("instances %q, want %q", got, tt.want)
			}
			if got := agenda(fake, "2027-03-01", "2027-05-01"); len(got) != len(tt.want) {
				t.Errorf("agenda %q, want %d instances", got, len(tt.want))
			}
		})
	}
	// Without an EXRULE every reading takes the series.
	for _, reading := range []gcalfake.ExRule{gcalfake.ExRuleApplied, gcalfake.ExRuleIgnored, gcalfake.ExRuleRejected} {
		_, svc := readingsFake(t, gcalfake.Readings{ExRule: reading})
		if _, err := svc.Events.Insert(cal, weekly("series71", "RRULE:FREQ=WEEKLY;COUNT=6", "EXDATE;TZID=Europe/Berlin:20270322T093000")).Do(); err != nil {
			t.Errorf("%s: %v", reading, err)
		}
	}
}

// TestExRuleReadingChangesAtRuntime: a series stored under ExRuleApplied
// shows every instance once the reading is another, and under
// ExRuleRejected it can no longer be updated with its EXRULE.
func TestExRuleReadingChangesAtRuntime(t *testing.T) {
	fake, svc := readingsFake(t, gcalfake.Readings{})
	if _, err := svc.Events.Insert(cal, weekly("series72", "RRULE:FREQ=WEEKLY;COUNT=4", "EXRULE:FREQ=WEEKLY;INTERVAL=2")).Do(); err != nil {
		t.Fatal(err)
	}
	if got := instanceDays(t, svc, "series72"); !slices.Equal(got, []string{"2027-03-22", "2027-04-05"}) {
		t.Errorf("applied: %q", got)
	}
	fake.SetReadings(gcalfake.Readings{ExRule: gcalfake.ExRuleRejected})
	if got := instanceDays(t, svc, "series72"); len(got) != 4 {
		t.Errorf("rejected, stored before: %q, want all 4", got)
	}
	_, err := svc.Events.Patch(cal, "series72", &calendar.Event{Summary: "Renamed"}).Do()
	apiErr(t, err, 400, "invalid")
	if _, err := svc.Events.Patch(cal, "series72", &calendar.Event{Recurrence: []string{"RRULE:FREQ=WEEKLY;COUNT=4"}}).Do(); err != nil {
		t.Errorf("patch without the EXRULE: %v", err)
	}
}
