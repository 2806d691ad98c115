package feed_test

import (
	"slices"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
)

// What `calsyncd check` reports of a feed, read from the parser's own
// warnings: the events it skipped and the zones it could not resolve.
func TestWarningsSkippedAndZones(t *testing.T) {
	ics := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nX-WR-TIMEZONE:Mars/Olympus\r\n" +
		"BEGIN:VEVENT\r\nUID:good\r\nDTSTART:20270111T090000Z\r\nSUMMARY:Good\r\nEND:VEVENT\r\n" +
		"BEGIN:VEVENT\r\nUID:nostart\r\nSUMMARY:No start\r\nEND:VEVENT\r\n" +
		"BEGIN:VEVENT\r\nUID:zoned\r\nDTSTART;TZID=Atlantis Standard Time:20270112T090000\r\nSUMMARY:Zoned\r\nEND:VEVENT\r\n" +
		"END:VCALENDAR\r\n"
	cal, err := feed.ParseBytes([]byte(ics), feed.Options{Now: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var skipped, zones []string
	for _, w := range cal.Warnings {
		if w.Skipped() {
			skipped = append(skipped, w.UID)
		}
		if z, ok := w.Zone(); ok {
			zones = append(zones, z)
		}
	}
	slices.Sort(zones)
	if len(cal.Events) != 2 || !slices.Equal(skipped, []string{"nostart"}) || !slices.Equal(zones, []string{"Atlantis Standard Time", "Mars/Olympus"}) {
		t.Fatalf("events %d, skipped %v, zones %v; warnings %v", len(cal.Events), skipped, zones, cal.Warnings)
	}
}

func TestWarningZone(t *testing.T) {
	tests := map[string]string{
		`unknown time zone "W. Foo": its times are read as UTC`:                                                                       "W. Foo",
		`time zone "Custom/Zone" matches no IANA zone: its times keep the feed's own rules (its series are written as single events)`: "Custom/Zone",
		`unknown calendar time zone "Mars/Olympus" ignored`:                                                                           "Mars/Olympus",
		`event 3 "Time zone talk" skipped: no DTSTART`:                                                                                "",
		`time zone "x" is fine`: "",
		`event ("Choir") has an EXRULE (FREQ=MONTHLY;BYDAY=-1MO); Google is not known to apply one: it is written as 25 EXDATEs`: "",
	}
	for msg, want := range tests {
		got, ok := feed.Warning{Message: msg}.Zone()
		if got != want || ok != (want != "") {
			t.Errorf("%q: Zone = %q, %v; want %q", msg, got, ok, want)
		}
	}
}
