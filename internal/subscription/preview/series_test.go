package preview

import (
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
)

// TestSeriesText: a series in a few words, and as written whenever a part
// of its rule is beyond what the words say.
func TestSeriesText(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	timed := feed.Time{T: time.Date(2026, 12, 7, 9, 30, 0, 0, berlin), Zone: "Europe/Berlin"}
	day := feed.Time{T: time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC), AllDay: true}
	for _, tc := range []struct {
		lines []string
		start feed.Time
		want  string
	}{
		{[]string{"RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=26"}, timed, "weekly on Mon, 26 times"},
		{[]string{"RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH;WKST=MO"}, timed, "every 2 weeks on Mon, Thu"},
		{[]string{"RRULE:FREQ=DAILY;COUNT=1"}, timed, "daily, 1 time"},
		// UNTIL is the series' date in its zone: 22:59 UTC is the next day in Berlin.
		{[]string{"RRULE:FREQ=WEEKLY;UNTIL=20270531T225900Z"}, timed, "weekly, until 2027-06-01"},
		{[]string{"RRULE:FREQ=YEARLY;UNTIL=20300101"}, day, "yearly, until 2030-01-01"},
		{[]string{"RRULE:FREQ=MONTHLY;BYDAY=-1SU"}, timed, "monthly on the last Sun"},
		{[]string{"RRULE:FREQ=MONTHLY;BYMONTHDAY=15;COUNT=12"}, day, "monthly on day 15, 12 times"},
		{[]string{"RRULE:FREQ=WEEKLY;BYDAY=MO", "EXDATE;TZID=Europe/Berlin:20261228T093000,20270104T093000"}, timed, "weekly on Mon, except 2 dates"},
		{[]string{"RRULE:FREQ=WEEKLY", "RDATE;VALUE=DATE:20270101"}, day, "weekly, and 1 more date"},
		{[]string{"RDATE;VALUE=DATE:20270101,20270201"}, day, "2 dates"},
		// Beyond the words: given as written.
		{[]string{"RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU"}, timed, "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU"},
		{[]string{"RRULE:FREQ=WEEKLY;BYDAY=1MO"}, timed, "RRULE:FREQ=WEEKLY;BYDAY=1MO"},
		{[]string{"RRULE:FREQ=SECONDLY"}, timed, "RRULE:FREQ=SECONDLY"},
		{[]string{"RRULE:FREQ=DAILY", "RRULE:FREQ=WEEKLY"}, timed, "RRULE:FREQ=DAILY RRULE:FREQ=WEEKLY"},
		{[]string{"RRULE:FREQ=DAILY;COUNT=x"}, timed, "RRULE:FREQ=DAILY;COUNT=x"},
	} {
		if got := seriesText(tc.lines, tc.start); got != tc.want {
			t.Errorf("seriesText(%q) = %q, want %q", tc.lines, got, tc.want)
		}
	}
}
