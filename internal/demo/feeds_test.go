package demo_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/demo"
	"github.com/calsyncd/calsyncd/internal/feed"
)

func TestShiftMovesEventDatesOnly(t *testing.T) {
	in := "BEGIN:VCALENDAR\r\nBEGIN:VTIMEZONE\r\nTZID:X\r\nBEGIN:STANDARD\r\nDTSTART:19701025T030000\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n" +
		"BEGIN:VEVENT\r\nUID:20270111-0000000020270111@x\r\nDTSTAMP:20261120T090000Z\r\nDTSTART;TZID=X:20270111T100000\r\n" +
		"DTEND;VALUE=DATE:20270112\r\nRRULE:FREQ=WEEKLY;UNTIL=20270329T080000Z;BYDAY=MO\r\nEXDATE;TZID=X:20270118T100000,\r\n 20270125T100000\r\n" +
		"RECURRENCE-ID:20270201T090000Z\r\nSUMMARY:Meeting 20270111\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	out := string(demo.Shift([]byte(in), 14))
	for _, want := range []string{"DTSTART:19701025T030000", "UID:20270111-0000000020270111@x", "DTSTAMP:20261120T090000Z",
		"DTSTART;TZID=X:20270125T100000", "DTEND;VALUE=DATE:20270126", "UNTIL=20270412T080000Z;BYDAY=MO",
		"EXDATE;TZID=X:20270201T100000,20270208T100000", "RECURRENCE-ID:20270215T090000Z", "SUMMARY:Meeting 20270111"} {
		if !strings.Contains(out, want) {
			t.Errorf("shifted feed lacks %q:\n%s", want, out)
		}
	}
	if string(demo.Shift([]byte(in), 0)) != in {
		t.Error("a zero shift changed the feed")
	}
}

func TestWeeksFromAnchor(t *testing.T) {
	for _, tt := range []struct {
		now  time.Time
		want int
	}{
		{demo.Anchor, 0},
		{demo.Anchor.AddDate(0, 0, 6), 0},   // Sunday of the anchor week
		{demo.Anchor.AddDate(0, 0, 7), 1},   // next Monday
		{demo.Anchor.AddDate(0, 0, -1), -1}, // the Sunday before
		{demo.Anchor.AddDate(1, 0, 0), 52},
	} {
		if got := demo.WeeksFromAnchor(tt.now); got != tt.want {
			t.Errorf("WeeksFromAnchor(%s) = %d, want %d", tt.now.Format(time.DateOnly), got, tt.want)
		}
	}
}

func TestSampleFeedsParseWhereverTheyAreMoved(t *testing.T) {
	for _, weeks := range []int{0, 5, 60, -3} {
		f, err := demo.NewFeeds(demo.Anchor.AddDate(0, 0, 7*weeks))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range f.Names() {
			rec := httptest.NewRecorder()
			f.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/feeds/"+name, nil))
			cal, err := feed.Parse(bytes.NewReader(rec.Body.Bytes()), feed.Options{})
			if err != nil || len(cal.Events) == 0 || len(cal.Warnings) != 0 {
				t.Errorf("%s moved %d weeks: %d events, warnings %v, %v", name, weeks, len(cal.Events), cal.Warnings, err)
			}
		}
	}
}
