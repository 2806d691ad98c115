// Package feedgen writes synthetic iCalendar feeds for benchmarks: a mix of
// timed (UTC, IANA and Windows zones), all-day and recurring events, with
// the VTIMEZONE blocks Outlook and Google include, folded lines and escaped
// text. The same bytes feed the Go benchmark and the ical.js comparison
// (bench/icaljs), so that both parse identical input.
package feedgen

import (
	"bytes"
	"fmt"
	"strings"
	"time"
)

// Zones used, with VTIMEZONE blocks as Outlook (Windows names) and Google
// (IANA names) write them.
var vtimezones = []string{
	"BEGIN:VTIMEZONE\r\nTZID:W. Europe Standard Time\r\nBEGIN:STANDARD\r\nDTSTART:16010101T030000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nRRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=10\r\nEND:STANDARD\r\nBEGIN:DAYLIGHT\r\nDTSTART:16010101T020000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nRRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=3\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r\n",
	"BEGIN:VTIMEZONE\r\nTZID:Pacific Standard Time\r\nBEGIN:STANDARD\r\nDTSTART:16010101T020000\r\nTZOFFSETFROM:-0700\r\nTZOFFSETTO:-0800\r\nRRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=1SU;BYMONTH=11\r\nEND:STANDARD\r\nBEGIN:DAYLIGHT\r\nDTSTART:16010101T020000\r\nTZOFFSETFROM:-0800\r\nTZOFFSETTO:-0700\r\nRRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=2SU;BYMONTH=3\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r\n",
	"BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nX-LIC-LOCATION:Europe/Berlin\r\nBEGIN:DAYLIGHT\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nTZNAME:CEST\r\nDTSTART:19700329T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\nBEGIN:STANDARD\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nTZNAME:CET\r\nDTSTART:19701025T030000\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n",
	"BEGIN:VTIMEZONE\r\nTZID:America/New_York\r\nX-LIC-LOCATION:America/New_York\r\nBEGIN:DAYLIGHT\r\nTZOFFSETFROM:-0500\r\nTZOFFSETTO:-0400\r\nTZNAME:EDT\r\nDTSTART:19700308T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU\r\nEND:DAYLIGHT\r\nBEGIN:STANDARD\r\nTZOFFSETFROM:-0400\r\nTZOFFSETTO:-0500\r\nTZNAME:EST\r\nDTSTART:19701101T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n",
}

// Generate returns a feed of n events. Every fifth event is all-day, one in
// five is a weekly series with UNTIL and EXDATEs, and the timed ones are in
// UTC, an IANA zone or a Windows zone.
func Generate(n int) []byte {
	var b bytes.Buffer
	b.Grow(n * 700)
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calsyncd//feedgen//EN\r\nX-WR-CALNAME:Benchmark\r\nX-WR-TIMEZONE:Europe/Berlin\r\n")
	for _, z := range vtimezones {
		b.WriteString(z)
	}
	base := time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)
	for i := range n {
		day := base.AddDate(0, 0, i%730)
		start := day.Add(time.Duration(i%10) * time.Hour)
		end := start.Add(time.Duration(30+(i%4)*15) * time.Minute)
		b.WriteString("BEGIN:VEVENT\r\n")
		fmt.Fprintf(&b, "UID:%08d-%x@bench.calsyncd.example\r\n", i, i*7919)
		b.WriteString("DTSTAMP:20260101T000000Z\r\n")
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "DTSTART;VALUE=DATE:%s\r\nDTEND;VALUE=DATE:%s\r\n", day.Format("20060102"), day.AddDate(0, 0, 1+i%3).Format("20060102"))
			b.WriteString("TRANSP:TRANSPARENT\r\n")
		case 1:
			fmt.Fprintf(&b, "DTSTART:%s\r\nDTEND:%s\r\n", start.Format("20060102T150405Z"), end.Format("20060102T150405Z"))
		case 2:
			fmt.Fprintf(&b, "DTSTART;TZID=Europe/Berlin:%s\r\nDTEND;TZID=Europe/Berlin:%s\r\n", start.Format("20060102T150405"), end.Format("20060102T150405"))
		case 3:
			zone := "W. Europe Standard Time"
			if i%2 == 0 {
				zone = "Pacific Standard Time"
			}
			fmt.Fprintf(&b, "DTSTART;TZID=%s:%s\r\nDTEND;TZID=%s:%s\r\n", zone, start.Format("20060102T150405"), zone, end.Format("20060102T150405"))
			b.WriteString("X-MICROSOFT-CDO-BUSYSTATUS:BUSY\r\nCLASS:PRIVATE\r\n")
		case 4:
			fmt.Fprintf(&b, "DTSTART;TZID=America/New_York:%s\r\nDTEND;TZID=America/New_York:%s\r\n", start.Format("20060102T150405"), end.Format("20060102T150405"))
			fmt.Fprintf(&b, "RRULE:FREQ=WEEKLY;UNTIL=%s;BYDAY=%s\r\n", start.AddDate(0, 3, 0).Format("20060102T150405Z"), strings.ToUpper(start.Weekday().String()[:2]))
			fmt.Fprintf(&b, "EXDATE;TZID=America/New_York:%s,%s\r\n", start.AddDate(0, 0, 14).Format("20060102T150405"), start.AddDate(0, 0, 28).Format("20060102T150405"))
		}
		fmt.Fprintf(&b, "SUMMARY:Event %d\\, planning \\; review\r\n", i)
		// A description long enough to be folded, with escapes.
		desc := fmt.Sprintf("DESCRIPTION:Agenda for meeting %d:\\n1. Status\\, risks and open questions\\n2. Next steps\\; owners and dates\\nJoin at https://meet.example.com/%d", i, i*31)
		writeFolded(&b, desc)
		fmt.Fprintf(&b, "LOCATION:Room %d\\, Building %c\r\n", i%40, 'A'+rune(i%6))
		fmt.Fprintf(&b, "SEQUENCE:%d\r\nSTATUS:CONFIRMED\r\n", i%3)
		b.WriteString("END:VEVENT\r\n")
	}
	b.WriteString("END:VCALENDAR\r\n")
	return b.Bytes()
}

func writeFolded(b *bytes.Buffer, line string) {
	for len(line) > 75 {
		b.WriteString(line[:75])
		b.WriteString("\r\n ")
		line = line[75:]
	}
	b.WriteString(line)
	b.WriteString("\r\n")
}
