package feed_test

import (
	"fmt"
	"strings"

	"github.com/calsyncd/calsyncd/internal/feed"
)

func ExampleParse() {
	const ics = "BEGIN:VCALENDAR\r\n" +
		"BEGIN:VEVENT\r\n" +
		"UID:standup@example.com\r\n" +
		"DTSTART;TZID=W. Europe Standard Time:20270104T093000\r\n" +
		"DURATION:PT15M\r\n" +
		"RRULE:FREQ=WEEKLY;BYDAY=MO;UNTIL=20270301T093000\r\n" +
		"SUMMARY:Standup\\, team A\r\n" +
		"END:VEVENT\r\n" +
		"END:VCALENDAR\r\n"
	cal, err := feed.Parse(strings.NewReader(ics), feed.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ev := cal.Events[0]
	fmt.Println(ev.Summary)
	fmt.Println(ev.Start.T.Format("2006-01-02 15:04 MST"), ev.Start.Zone)
	fmt.Println(ev.End.T.Sub(ev.Start.T))
	fmt.Println(ev.Recurrence)
	// Output:
	// Standup, team A
	// 2027-01-04 09:30 CET Europe/Berlin
	// 15m0s
	// [RRULE:FREQ=WEEKLY;BYDAY=MO;UNTIL=20270301T083000Z]
}
