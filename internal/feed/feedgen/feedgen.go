// Package feedgen writes synthetic iCalendar feeds for benchmarks: a mix of
// timed (UTC, IANA and Windows zones), all-day and recurring events, with
// the VTIMEZONE blocks Outlook and Google include, folded lines and escaped
// text (Generate), and the shapes that cost most per event or per byte
// (Shapes). The same bytes feed the Go benchmark and the ical.js
// comparison (bench/icaljs), so that both parse identical input.
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

// Shape is a kind of feed: a generator and the sizes benchmarked.
type Shape struct {
	Name     string
	Generate func(n int) []byte
	Events   []int
}

// Shapes are the feeds BenchmarkParse and bench/icaljs measure.
var Shapes = []Shape{
	// Generate: the everyday mix.
	{"mixed", Generate, []int{1_000, 100_000}},
	// UID and DTSTART only: 324,000 events in 20 MiB.
	{"minimal", GenerateMinimal, []int{324_000}},
	// 40 Outlook display-name VTIMEZONEs matched to IANA zones by their rules.
	{"zones", GenerateZones, []int{2_000}},
	// 4 KiB folded, escaped descriptions (HTML invitations).
	{"descriptions", GenerateDescriptions, []int{5_000}},
	// Every other event a series with EXDATEs and RDATEs, the rest moved
	// instances.
	{"recurrence", GenerateRecurrence, []int{20_000}},
	// About 40 properties an event: attendees with parameters, X-
	// properties, an alarm (invitations).
	{"properties", GenerateProperties, []int{5_000}},
}

func header(b *bytes.Buffer, name string) {
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calsyncd//feedgen//EN\r\nX-WR-CALNAME:" + name + "\r\n")
}

// GenerateMinimal returns n events of a UID and a DTSTART each, the
// smallest event a feed can hold: the most events per byte.
func GenerateMinimal(n int) []byte {
	var b bytes.Buffer
	b.Grow(n*66 + 200)
	header(&b, "Minimal")
	base := time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)
	for i := range n {
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:%06d\r\nDTSTART:%s\r\nEND:VEVENT\r\n", i, base.Add(time.Duration(i%20000)*time.Hour).Format("20060102T150405Z"))
	}
	b.WriteString("END:VCALENDAR\r\n")
	return b.Bytes()
}

// windowsRules are Outlook-style observances: standard and daylight
// offsets, and the local time and yearly rule (BYMONTH;BYDAY) of each
// switch (no daylight rule: no daylight time).
var windowsRules = []struct {
	std, dst     string
	stdAt, toStd string
	dstAt, toDst string
}{
	{"+0100", "+0200", "030000", "10;-1SU", "020000", "3;-1SU"},
	{"+0000", "+0100", "020000", "10;-1SU", "010000", "3;-1SU"},
	{"+0200", "+0300", "040000", "10;-1SU", "030000", "3;-1SU"},
	{"-0800", "-0700", "020000", "11;1SU", "020000", "3;2SU"},
	{"-0500", "-0400", "020000", "11;1SU", "020000", "3;2SU"},
	{"-0600", "-0500", "020000", "11;1SU", "020000", "3;2SU"},
	{"+1000", "+1100", "030000", "4;1SU", "020000", "10;1SU"},
	{"+1200", "+1300", "030000", "4;1SU", "020000", "9;-1SU"},
	{"+0900", "", "000000", "", "", ""},
	{"+0530", "", "000000", "", "", ""},
	{"-0300", "", "000000", "", "", ""},
}

// GenerateZones returns n events spread over 40 VTIMEZONEs named the way
// Outlook names them ("(UTC+01:00) City 7"): no name resolves, so each is
// matched to an IANA zone by its rules, the slowest kind of zone.
func GenerateZones(n int) []byte {
	const zones = 40
	var b bytes.Buffer
	b.Grow(n*400 + zones*500)
	header(&b, "Zones")
	name := func(z int) string {
		r := windowsRules[z%len(windowsRules)]
		return fmt.Sprintf("(UTC%s:%s) City %d", r.std[:3], r.std[3:], z)
	}
	for z := range zones {
		r := windowsRules[z%len(windowsRules)]
		fmt.Fprintf(&b, "BEGIN:VTIMEZONE\r\nTZID:%s\r\n", name(z))
		if r.dst == "" {
			fmt.Fprintf(&b, "BEGIN:STANDARD\r\nDTSTART:16010101T000000\r\nTZOFFSETFROM:%s\r\nTZOFFSETTO:%s\r\nEND:STANDARD\r\n", r.std, r.std)
		} else {
			sm, sd, _ := strings.Cut(r.toStd, ";")
			dm, dd, _ := strings.Cut(r.toDst, ";")
			fmt.Fprintf(&b, "BEGIN:STANDARD\r\nDTSTART:16010101T%s\r\nTZOFFSETFROM:%s\r\nTZOFFSETTO:%s\r\nRRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=%s;BYMONTH=%s\r\nEND:STANDARD\r\n", r.stdAt, r.dst, r.std, sd, sm)
			fmt.Fprintf(&b, "BEGIN:DAYLIGHT\r\nDTSTART:16010101T%s\r\nTZOFFSETFROM:%s\r\nTZOFFSETTO:%s\r\nRRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=%s;BYMONTH=%s\r\nEND:DAYLIGHT\r\n", r.dstAt, r.std, r.dst, dd, dm)
		}
		b.WriteString("END:VTIMEZONE\r\n")
	}
	base := time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)
	for i := range n {
		start := base.AddDate(0, 0, i%730).Add(time.Duration(i%10) * time.Hour)
		z := name(i % zones)
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:zone-%d@bench.calsyncd.example\r\nDTSTAMP:20260101T000000Z\r\n", i)
		fmt.Fprintf(&b, "DTSTART;TZID=\"%s\":%s\r\nDTEND;TZID=\"%s\":%s\r\n", z, start.Format("20060102T150405"), z, start.Add(time.Hour).Format("20060102T150405"))
		fmt.Fprintf(&b, "SUMMARY:Call %d\r\nX-MICROSOFT-CDO-BUSYSTATUS:BUSY\r\nEND:VEVENT\r\n", i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	return b.Bytes()
}

// GenerateDescriptions returns n events with 4 KiB descriptions, folded
// and escaped, and their HTML twin (X-ALT-DESC), as meeting invitations
// carry: the most bytes per event.
func GenerateDescriptions(n int) []byte {
	var b bytes.Buffer
	b.Grow(n*9000 + 200)
	header(&b, "Descriptions")
	base := time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)
	para := "Join the meeting: https://meet.example.com/j/8812345678?pwd=abcdefXYZ\\n" +
		"Meeting ID: 881 2345 6789\\, Passcode: 424242\\; dial by your location\\n" +
		"+1 555 0100 US (New York)\\, +44 20 7946 0000 UK (London)\\n\\n"
	for i := range n {
		start := base.AddDate(0, 0, i%730).Add(time.Duration(i%10) * time.Hour)
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:desc-%d@bench.calsyncd.example\r\nDTSTAMP:20260101T000000Z\r\n", i)
		fmt.Fprintf(&b, "DTSTART:%s\r\nDTEND:%s\r\nSUMMARY:Invitation %d\\, weekly sync\r\n", start.Format("20060102T150405Z"), start.Add(time.Hour).Format("20060102T150405Z"), i)
		desc := "DESCRIPTION:" + strings.Repeat(para, 4096/len(para)+1)
		writeFolded(&b, desc[:4096+12])
		writeFolded(&b, "X-ALT-DESC;FMTTYPE=text/html:<html><body><p>"+strings.Repeat("Join the meeting<br>", 150)+"</p></body></html>")
		b.WriteString("END:VEVENT\r\n")
	}
	b.WriteString("END:VCALENDAR\r\n")
	return b.Bytes()
}

// GenerateRecurrence returns n events: every other one a series (weekly,
// daily, monthly, yearly; COUNT or UNTIL) with ten EXDATEs and two RDATEs,
// the rest moved or cancelled instances of those series (RECURRENCE-ID).
func GenerateRecurrence(n int) []byte {
	var b bytes.Buffer
	b.Grow(n*700 + 2000)
	header(&b, "Recurrence")
	b.WriteString(vtimezones[2])
	base := time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)
	rules := []string{"FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=60", "FREQ=DAILY;INTERVAL=2;UNTIL=%s", "FREQ=MONTHLY;BYDAY=2TU;COUNT=24", "FREQ=YEARLY;COUNT=10"}
	for i := 0; i < n; i += 2 {
		start := base.AddDate(0, 0, i%365).Add(time.Duration(i%10) * time.Hour)
		uid := fmt.Sprintf("series-%d@bench.calsyncd.example", i)
		rule := rules[(i/2)%len(rules)]
		if strings.Contains(rule, "%s") {
			rule = fmt.Sprintf(rule, start.AddDate(0, 4, 0).UTC().Format("20060102T150405Z"))
		}
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:%s\r\nDTSTAMP:20260101T000000Z\r\nSEQUENCE:1\r\n", uid)
		fmt.Fprintf(&b, "DTSTART;TZID=Europe/Berlin:%s\r\nDTEND;TZID=Europe/Berlin:%s\r\nRRULE:%s\r\n", start.Format("20060102T150405"), start.Add(time.Hour).Format("20060102T150405"), rule)
		var ex []string
		for k := 1; k <= 10; k++ {
			ex = append(ex, start.AddDate(0, 0, 7*k).Format("20060102T150405"))
		}
		fmt.Fprintf(&b, "EXDATE;TZID=Europe/Berlin:%s\r\n", strings.Join(ex, ","))
		fmt.Fprintf(&b, "RDATE;TZID=Europe/Berlin:%s,%s\r\n", start.AddDate(0, 0, 3).Format("20060102T150405"), start.AddDate(0, 0, 4).Format("20060102T150405"))
		fmt.Fprintf(&b, "SUMMARY:Series %d\r\nEND:VEVENT\r\n", i)
		if i+1 < n {
			orig := start.AddDate(0, 0, 7*11)
			fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:%s\r\nDTSTAMP:20260101T000000Z\r\nSEQUENCE:2\r\nRECURRENCE-ID;TZID=Europe/Berlin:%s\r\n", uid, orig.Format("20060102T150405"))
			fmt.Fprintf(&b, "DTSTART;TZID=Europe/Berlin:%s\r\nDTEND;TZID=Europe/Berlin:%s\r\n", orig.Add(2*time.Hour).Format("20060102T150405"), orig.Add(3*time.Hour).Format("20060102T150405"))
			if i%4 == 0 {
				b.WriteString("STATUS:CANCELLED\r\n")
			}
			fmt.Fprintf(&b, "SUMMARY:Series %d (moved)\r\nEND:VEVENT\r\n", i)
		}
	}
	b.WriteString("END:VCALENDAR\r\n")
	return b.Bytes()
}

// GenerateProperties returns n events of about 40 properties each, as
// invitations carry them: an organizer and twenty attendees with
// parameters, categories, links, times of creation and change, vendor
// X- properties and an alarm: the most properties per event.
func GenerateProperties(n int) []byte {
	var b bytes.Buffer
	b.Grow(n*3200 + 200)
	header(&b, "Properties")
	b.WriteString(vtimezones[2])
	base := time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)
	for i := range n {
		start := base.AddDate(0, 0, i%730).Add(time.Duration(i%10) * time.Hour)
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:props-%d@bench.calsyncd.example\r\nDTSTAMP:20260101T000000Z\r\n", i)
		fmt.Fprintf(&b, "CREATED:20251201T101500Z\r\nLAST-MODIFIED:20251215T093000Z\r\nSEQUENCE:%d\r\n", i%4)
		fmt.Fprintf(&b, "DTSTART;TZID=Europe/Berlin:%s\r\nDTEND;TZID=Europe/Berlin:%s\r\n", start.Format("20060102T150405"), start.Add(90*time.Minute).Format("20060102T150405"))
		fmt.Fprintf(&b, "SUMMARY:Review %d\r\nLOCATION:Room %d\\, Building B\r\nGEO:52.5200;13.4050\r\n", i, i%30)
		b.WriteString("ORGANIZER;CN=Alex Organiser:mailto:alex@example.com\r\n")
		for a := range 20 {
			fmt.Fprintf(&b, "ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;RSVP=TRUE;CN=Person %d:mailto:person%d@example.com\r\n", a, a)
		}
		b.WriteString("CATEGORIES:Work,Review,Quarterly\r\nURL:https://calendar.example.com/event/" + fmt.Sprint(i) + "\r\n")
		b.WriteString("CLASS:PUBLIC\r\nTRANSP:OPAQUE\r\nPRIORITY:5\r\nSTATUS:CONFIRMED\r\n")
		b.WriteString("X-MICROSOFT-CDO-BUSYSTATUS:BUSY\r\nX-MICROSOFT-CDO-IMPORTANCE:1\r\nX-MICROSOFT-DISALLOW-COUNTER:FALSE\r\nX-MS-OLK-AUTOFILLLOCATION:FALSE\r\nX-MS-OLK-CONFTYPE:0\r\n")
		b.WriteString("BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:Reminder\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\n")
	}
	b.WriteString("END:VCALENDAR\r\n")
	return b.Bytes()
}
