package feed_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/feed/corpus"
)

// verdict is what a corpus file must give: how many events, and, for a
// file with malformed events, why each skipped one was skipped (a warning
// containing each string). Every other warning is a repair, never a skip.
type verdict struct {
	events    int
	malformed string   // what is wrong with the file, "" when it is fine
	skipped   []string // a substring of the warning for each skipped event
	warns     []string // other warnings that must be there
}

var corpusVerdicts = map[string]verdict{
	"golang-ical/issue52_notworking.ics":                                        {events: 1},
	"ical4j/1106817412.ics":                                                     {events: 1},
	"ical4j/EstoniaHolidays.ics":                                                {events: 152},
	"ical4j/Standup.ics":                                                        {events: 1},
	"ical4j/THFC.ics":                                                           {events: 114},
	"ical4j/calconnect6.ics":                                                    {events: 1, warns: []string{"with recurrence lines and no master: read as the master"}},
	"ical4j/google_aus_holidays.ics":                                            {events: 96},
	"ical4j/korganizer-lowercase.ics":                                           {events: 1},
	"ical4j/maritz.ics":                                                         {events: 1},
	"ical4j/oracle-personal-notes-test.ics":                                     {events: 1},
	"ical4j/sogo-geo-escaped-semicolon.ics":                                     {events: 1},
	"ical4j/tmeher.ics":                                                         {events: 1},
	"keeper-sh/berkeley-ib-seminars.ics":                                        {events: 17},
	"keeper-sh/hebcal-geoname-3448439.ics":                                      {events: 270},
	"keeper-sh/meetup-torontojs.ics":                                            {events: 1},
	"keeper-sh/stanford-featured-events.ics":                                    {events: 2500},
	"khal/event_rrule_recuid_cancelled.ics":                                     {events: 3},
	"khal/mult_uids_and_recuid_no_order.ics":                                    {events: 3},
	"khal/non_dst_error.ics":                                                    {events: 2},
	"khal/tz_windows_format.ics":                                                {events: 1},
	"node-ical/Office-2012-owa.ics":                                             {events: 4},
	"node-ical/exchange_whole_day_moved_recurrence.ics":                         {events: 2},
	"node-ical/festival-multiday-rrule.ics":                                     {events: 128},
	"node-ical/ms_timezones.ics":                                                {events: 4},
	"node-ical/tentative-apple-calendar.ics":                                    {events: 4},
	"node-ical/test_date_duration.ics":                                          {events: 1},
	"node-ical/test_with_multiple_tzids_in_vtimezone.ics":                       {events: 1},
	"node-ical/tripit-location-escaping.ics":                                    {events: 47},
	"node-ical/vtodo-vfreebusy.ics":                                             {events: 3},
	"python-icalendar/bom_calendar.ics":                                         {events: 0},
	"python-icalendar/issue_1050_calendar_with_events_and_todos.ics":            {events: 2},
	"python-icalendar/issue_165_missing_event.ics":                              {events: 1},
	"python-icalendar/issue_237_fail_to_parse_timezone_with_non_ascii_tzid.ics": {events: 1},
	"python-icalendar/issue_313_globally_unique_tzid.ics":                       {events: 3},
	"recurring-ical-events/discourse_no_dtend.ics":                              {events: 4},
	"recurring-ical-events/issue_15_duplicated_events.ics":                      {events: 3},
	"recurring-ical-events/issue_173_only_modifications_error.ics":              {events: 677},
	"recurring-ical-events/issue_18_cancel_status.ics":                          {events: 2},
	"recurring-ical-events/issue_20_exdate_ignored.ics":                         {events: 1},
	"recurring-ical-events/issue_28_rrule_with_UTC_endinginZ.ics":               {events: 5},
	"recurring-ical-events/issue_75_range_parameter.ics":                        {events: 4},
	"recurring-ical-events/issue_97_simple_journal.ics":                         {events: 0},
	"recurring-ical-events/machbar_16_feb_2019.ics":                             {events: 64},
	"recurring-ical-events/rdate_hackerpublicradio.ics":                         {events: 1},

	// Repaired: the whole file is kept.
	"keeper-sh/outlook-exchange-windows-timezones.ics": {events: 3},
	"python-icalendar/issue_350.ics": {events: 1, malformed: "a comment line after END:VCALENDAR",
		warns: []string{"1 lines after END:VCALENDAR ignored"}},
	"recurring-ical-events/issue_61_time_zone_error.ics": {events: 1, malformed: "an ORGANIZER folded without the leading space",
		warns: []string{"folded without the leading space joined to ORGANIZER"}},
	"node-ical/duplicate-uid-sequence.ics": {events: 2, malformed: "two UIDs used twice; the higher SEQUENCE wins",
		warns: []string{"kept the one with SEQUENCE 2", "kept the one with SEQUENCE 3"}},
	"node-ical/tv-show-episode.ics": {events: 26, malformed: "two episodes share one UID; one is kept",
		warns: []string{`2 events share UID "20110421T220000Z-83@tvcountdown.com"`}},
	"recurring-ical-events/bad_rrule_missing_until_event.ics": {events: 1, malformed: "RRULE with UNTL= (a typo)",
		warns: []string{`invalid RRULE part "UNTL=20191023"; only its first occurrence is kept`}},
	"python-icalendar/issue_156_RDATE_with_PERIOD_TZID_khal_2.ics": {events: 1,
		malformed: "a Lotus VTIMEZONE whose October switch is an hour off every IANA zone (matched by its name and its offsets away from the switch)",
		warns:     []string{"with recurrence lines and no master: read as the master"}},

	// Malformed events, skipped with a warning naming them.
	"ical4j/phpicalendar_sample.ics": {events: 16, malformed: "an event whose DTEND has a 5-digit time",
		skipped: []string{`event 15 ("Event") skipped: DTEND: invalid date-time "20031114T18300"`}},
	"ics-parser/ICal.ics": {events: 20, malformed: "an event on 32 October; raw newline in a DESCRIPTION",
		skipped: []string{`skipped: DTSTART: invalid date-time "20171032T000000"`},
		warns:   []string{"1 raw line breaks inside DESCRIPTION kept as text"}},
	"ics-parser/issue-343.ics": {events: 1, malformed: "raw newlines in a DESCRIPTION; a VEVENT holding only a UID",
		skipped: []string{"UniqueIDValueHere: event 2 skipped: no DTSTART"},
		warns:   []string{"10 raw line breaks inside DESCRIPTION kept as text"}},
	"node-ical/bad_custom_ms_tz.ics": {events: 2, malformed: "an unknown TZID with no VTIMEZONE; a negative DURATION with a week in its time part",
		skipped: []string{`DURATION: invalid duration "-PT1W1D2H3M4S"`},
		warns:   []string{`unknown time zone "tzone://Microsoft/Custom"`}},
	"node-ical/large-file-with-late-error.ics": {events: 394, malformed: "6 events on days that do not exist (30 Feb, 31 Apr...); the last has DTSTART twice",
		skipped: []string{`"20240230T100000"`, `"20240231T100000"`, `"20240431T100000"`, `"20240631T100000"`, `"20240931T100000"`, `"20241131T100000"`,
			"event 401 (\"This event should trigger an error after 2000+ lines\") skipped: DTSTART appears twice with different values"}},
	// The series and its RDATE PERIOD of 2 hours (the series' events last
	// 3), written as an override with its own end.
	"python-icalendar/issue_722_missing_timezones.ics": {events: 2, malformed: "two events without DTSTART",
		skipped: []string{"event 2 skipped: no DTSTART", "event 3 skipped: no DTSTART"}},
}

// TestCorpusVerdicts parses every file of ../shared/feeds and checks it
// against its verdict. A new file fails the test until it gets one.
func TestCorpusVerdicts(t *testing.T) {
	_, files := corpus.Files(t)
	if len(files) != len(corpusVerdicts) {
		t.Errorf("%d corpus files, %d verdicts", len(files), len(corpusVerdicts))
	}
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			v, ok := corpusVerdicts[name]
			if !ok {
				t.Fatal("no verdict for this file")
			}
			cal := mustParseCorpus(t, name, feed.Options{})
			checkCalendar(t, cal)
			if len(cal.Events) != v.events {
				t.Errorf("%d events, want %d", len(cal.Events), v.events)
			}
			skips := 0
			for _, w := range cal.Warnings {
				if strings.Contains(w.Message, " skipped") {
					skips++
				}
			}
			if skips != len(v.skipped) {
				t.Errorf("%d events skipped, want %d: %v", skips, len(v.skipped), cal.Warnings)
			}
			for _, want := range append(append([]string(nil), v.skipped...), v.warns...) {
				found := false
				for _, w := range cal.Warnings {
					found = found || strings.Contains(w.String(), want)
				}
				if !found {
					t.Errorf("no warning says %q: %v", want, cal.Warnings)
				}
			}
			if v.malformed == "" && len(v.skipped) > 0 {
				t.Error("a file with skipped events must say what is malformed")
			}
		})
	}
}

var parsedCorpus sync.Map // file name -> *feed.Calendar parsed with default options

// mustParseCorpus parses a corpus file; with default options the result is
// shared between tests (which only read it), since the big files cost
// seconds under -race.
func mustParseCorpus(t *testing.T, name string, opts feed.Options) *feed.Calendar {
	t.Helper()
	shared := opts == (feed.Options{})
	if shared {
		if cal, ok := parsedCorpus.Load(name); ok {
			return cal.(*feed.Calendar)
		}
	}
	body, err := os.ReadFile(filepath.Join(corpus.Dir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	cal, err := feed.ParseBytes(body, opts)
	if err != nil {
		t.Fatal(err)
	}
	if shared {
		parsedCorpus.Store(name, cal)
	}
	return cal
}

func find(t *testing.T, cal *feed.Calendar, match func(feed.Event) bool) feed.Event {
	t.Helper()
	for _, ev := range cal.Events {
		if match(ev) {
			return ev
		}
	}
	t.Fatal("no such event")
	return feed.Event{}
}

func bySummary(s string) func(feed.Event) bool {
	return func(ev feed.Event) bool { return ev.Summary == s }
}

func byKey(uid, rid string) func(feed.Event) bool {
	return func(ev feed.Event) bool { return ev.UID == uid && ev.RecurrenceID == rid }
}

func at(zone string, y int, m time.Month, d, h, min int) time.Time {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		panic(err)
	}
	return time.Date(y, m, d, h, min, 0, 0, loc)
}

// TestCorpusTimeZones checks how each kind of TZID in the corpus resolves.
func TestCorpusTimeZones(t *testing.T) {
	tests := []struct {
		file  string
		event func(feed.Event) bool
		zone  string
		start time.Time
	}{
		{"keeper-sh/outlook-exchange-windows-timezones.ics", bySummary("Central Team Sync"), "America/Chicago", at("America/Chicago", 2026, 2, 11, 10, 0)},
		{"keeper-sh/outlook-exchange-windows-timezones.ics", bySummary("One-time Standup"), "America/New_York", at("America/New_York", 2026, 3, 10, 9, 0)},
		{"node-ical/ms_timezones.ics", bySummary("test"), "Europe/Berlin", at("Europe/Berlin", 2020, 9, 10, 9, 0)},
		// TZID="W. Europe Standard Time:20200609T090000" (the value swallowed).
		{"node-ical/ms_timezones.ics", bySummary("Log Yesterday's Jira time"), "Europe/Berlin", at("Europe/Berlin", 2020, 6, 9, 9, 0)},
		{"node-ical/ms_timezones.ics", bySummary("Not the actual summary 1"), "America/Los_Angeles", at("America/Los_Angeles", 2020, 9, 15, 8, 30)},
		{"khal/tz_windows_format.ics", bySummary("Event with Windows TZ name"), "Pacific/Auckland", at("Pacific/Auckland", 2019, 11, 20, 13, 0)},
		{"node-ical/Office-2012-owa.ics", bySummary(" TEST Syd"), "Australia/Sydney", at("Australia/Sydney", 2020, 10, 28, 13, 30)},
		{"node-ical/Office-2012-owa.ics", bySummary(" TEST"), "America/New_York", at("America/New_York", 2020, 10, 28, 13, 30)},
		{"ical4j/Standup.ics", bySummary("Standup"), "Australia/Sydney", at("Australia/Sydney", 2009, 3, 10, 9, 30)},
		{"ical4j/tmeher.ics", bySummary("Now with descriptoin"), "America/Los_Angeles", at("America/Los_Angeles", 2004, 10, 11, 22, 30)},
		{"ical4j/calconnect6.ics", func(feed.Event) bool { return true }, "America/New_York", at("America/New_York", 2005, 4, 26, 10, 0)},
		{"python-icalendar/issue_165_missing_event.ics", bySummary("Sprint 25 Daily Standup"), "Europe/Berlin", at("Europe/Berlin", 2015, 7, 3, 10, 0)},
		{"python-icalendar/issue_237_fail_to_parse_timezone_with_non_ascii_tzid.ics", func(feed.Event) bool { return true }, "America/Sao_Paulo", at("America/Sao_Paulo", 2017, 5, 11, 13, 30)},
		{"python-icalendar/issue_313_globally_unique_tzid.ics", byKey("mozilla-lightning@issue-313", ""), "America/New_York", at("America/New_York", 2020, 4, 26, 14, 0)},
		{"python-icalendar/issue_313_globally_unique_tzid.ics", byKey("libical-evolution@issue-313", ""), "Europe/Berlin", at("Europe/Berlin", 2020, 4, 26, 14, 0)},
		{"python-icalendar/issue_313_globally_unique_tzid.ics", byKey("multipart-olson@issue-313", ""), "America/Argentina/Buenos_Aires", at("America/Argentina/Buenos_Aires", 2020, 4, 26, 14, 0)},
		{"ical4j/phpicalendar_sample.ics", func(ev feed.Event) bool { return ev.Start.Zone == "America/Chicago" }, "America/Chicago", time.Time{}},
		{"node-ical/vtodo-vfreebusy.ics", bySummary("Coffee with Jason"), "America/Los_Angeles", at("America/Los_Angeles", 2002, 10, 28, 14, 0)},
		{"python-icalendar/issue_722_missing_timezones.ics", func(feed.Event) bool { return true }, "America/New_York", time.Time{}},
		// Floating times read in X-WR-TIMEZONE:US/Eastern.
		{"node-ical/tv-show-episode.ics", func(ev feed.Event) bool { return strings.HasPrefix(ev.Summary, "The Daily Show - S16E44") }, "America/New_York", at("America/New_York", 2011, 3, 31, 23, 0)},
		{"keeper-sh/hebcal-geoname-3448439.ics", bySummary("Candle lighting"), "America/Sao_Paulo", time.Time{}},
		{"ics-parser/ICal.ics", bySummary("Microsoft Unicode CLDR EXDATE Test"), "America/New_York", at("America/New_York", 2016, 4, 9, 9, 0)},
		// A Lotus VTIMEZONE whose October switch is an hour off: its name
		// ("Central Europe") and its offsets away from the switch say
		// which zone it is.
		{"python-icalendar/issue_156_RDATE_with_PERIOD_TZID_khal_2.ics", func(feed.Event) bool { return true }, "Europe/Budapest", time.Date(2021, 11, 1, 15, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		cal := mustParseCorpus(t, tt.file, feed.Options{})
		ev := find(t, cal, tt.event)
		if ev.Start.Zone != tt.zone {
			t.Errorf("%s %q: zone %q, want %q", tt.file, ev.Summary, ev.Start.Zone, tt.zone)
		}
		if !tt.start.IsZero() && !ev.Start.T.Equal(tt.start) {
			t.Errorf("%s %q: start %v, want %v", tt.file, ev.Summary, ev.Start.T, tt.start)
		}
	}
}

func TestCorpusFloatingTimesUseTheSubscriptionZone(t *testing.T) {
	// No X-WR-TIMEZONE: the configured zone places floating times.
	cal := mustParseCorpus(t, "node-ical/test_with_multiple_tzids_in_vtimezone.ics", feed.Options{DefaultZone: "America/Los_Angeles"})
	ev := cal.Events[0]
	if ev.Start.Zone != "America/Los_Angeles" || !ev.Start.T.Equal(at("America/Los_Angeles", 2024, 6, 27, 0, 0)) {
		t.Errorf("floating start = %v in %q", ev.Start.T, ev.Start.Zone)
	}
}

func TestCorpusEventProperties(t *testing.T) {
	t.Run("all-day without DTEND lasts a day", func(t *testing.T) {
		cal := mustParseCorpus(t, "keeper-sh/stanford-featured-events.ics", feed.Options{})
		n := 0
		for _, ev := range cal.Events {
			if ev.Start.AllDay {
				n++
				if ev.End.T.Sub(ev.Start.T) < 24*time.Hour {
					t.Fatalf("%s: all-day event of %v", ev.UID, ev.End.T.Sub(ev.Start.T))
				}
			}
		}
		if n < 600 {
			t.Errorf("%d all-day events, want the 607 without DTEND among them", n)
		}
	})
	t.Run("multi-day all-day keeps its exclusive end", func(t *testing.T) {
		ev := find(t, mustParseCorpus(t, "node-ical/tripit-location-escaping.ics", feed.Options{}), bySummary("Redwood City, CA, November 2011"))
		if !ev.Start.AllDay || ev.Start.Date() != "2011-11-08" || ev.End.Date() != "2011-11-11" {
			t.Errorf("got %s..%s", ev.Start.Date(), ev.End.Date())
		}
	})
	t.Run("DATE without VALUE=DATE and DURATION PT1W", func(t *testing.T) {
		ev := mustParseCorpus(t, "node-ical/test_date_duration.ics", feed.Options{}).Events[0]
		if !ev.Start.AllDay || ev.Start.Date() != "2024-02-15" || ev.End.Date() != "2024-02-22" {
			t.Errorf("got %v %s..%s", ev.Start.AllDay, ev.Start.Date(), ev.End.Date())
		}
	})
	t.Run("missing DTEND on a timed event is zero-length", func(t *testing.T) {
		for _, ev := range mustParseCorpus(t, "recurring-ical-events/discourse_no_dtend.ics", feed.Options{}).Events {
			if !ev.End.T.Equal(ev.Start.T) && ev.End.IsZero() {
				t.Errorf("%s: end %v", ev.UID, ev.End.T)
			}
		}
	})
	t.Run("DURATION", func(t *testing.T) {
		ev := find(t, mustParseCorpus(t, "ics-parser/ICal.ics", feed.Options{}), bySummary("Duration Test"))
		if d := ev.End.T.Sub(ev.Start.T); d != time.Hour+15*time.Minute+5*time.Second {
			t.Errorf("duration %v", d)
		}
	})
	t.Run("zero-length all-day becomes a day", func(t *testing.T) {
		ev := find(t, mustParseCorpus(t, "ics-parser/ICal.ics", feed.Options{}), bySummary("Year 2038 problem test"))
		if ev.End.T.Sub(ev.Start.T) != 24*time.Hour {
			t.Errorf("got %s..%s", ev.Start.Date(), ev.End.Date())
		}
	})
	t.Run("status, class, transparency", func(t *testing.T) {
		cal := mustParseCorpus(t, "node-ical/tentative-apple-calendar.ics", feed.Options{})
		statuses := map[string]int{}
		for _, ev := range cal.Events {
			statuses[ev.Status]++
		}
		if statuses[feed.StatusCancelled] != 1 || statuses[feed.StatusTentative] != 1 || statuses[feed.StatusConfirmed] != 2 {
			t.Errorf("statuses %v", statuses)
		}
		if v := mustParseCorpus(t, "ical4j/oracle-personal-notes-test.ics", feed.Options{}).Events[0].Visibility; v != feed.VisibilityPrivate {
			t.Errorf("CLASS:PRIVATE gave %q", v)
		}
		transparent := 0
		for _, ev := range mustParseCorpus(t, "keeper-sh/hebcal-geoname-3448439.ics", feed.Options{}).Events {
			if ev.Transparency == feed.TransparencyTransparent {
				transparent++
			}
		}
		if transparent == 0 {
			t.Error("no TRANSP:TRANSPARENT event")
		}
	})
	t.Run("cancelled override", func(t *testing.T) {
		cal := mustParseCorpus(t, "khal/event_rrule_recuid_cancelled.ics", feed.Options{})
		cancelled := 0
		for _, ev := range cal.Events {
			if ev.RecurrenceID != "" && ev.Status == feed.StatusCancelled {
				cancelled++
			}
		}
		if cancelled != 1 {
			t.Errorf("%d cancelled overrides", cancelled)
		}
	})
	t.Run("text unescaping, once", func(t *testing.T) {
		ev := find(t, mustParseCorpus(t, "node-ical/tripit-location-escaping.ics", feed.Options{}), func(ev feed.Event) bool {
			return strings.Contains(ev.Location, ",") || strings.Contains(ev.Description, ";")
		})
		for _, s := range []string{ev.Location, ev.Description, ev.Summary} {
			if strings.Contains(s, `\,`) || strings.Contains(s, `\;`) || strings.Contains(s, `\n`) {
				t.Errorf("escape left in %q", s)
			}
		}
	})
	t.Run("URL", func(t *testing.T) {
		for _, ev := range mustParseCorpus(t, "keeper-sh/berkeley-ib-seminars.ics", feed.Options{}).Events {
			if !strings.HasPrefix(ev.URL, "http") {
				t.Errorf("%s: URL %q", ev.UID, ev.URL)
			}
		}
	})
	t.Run("VTODO, VJOURNAL, VFREEBUSY ignored", func(t *testing.T) {
		if n := len(mustParseCorpus(t, "recurring-ical-events/issue_97_simple_journal.ics", feed.Options{}).Events); n != 0 {
			t.Errorf("%d events from a journal", n)
		}
	})
	t.Run("invalid UTF-8 is replaced", func(t *testing.T) {
		ev := mustParseCorpus(t, "ical4j/1106817412.ics", feed.Options{}).Events[0]
		if !strings.ContainsRune(ev.Summary+ev.Description, '\uFFFD') && !strings.Contains(ev.Summary+ev.Description, "?") {
			t.Errorf("summary %q", ev.Summary)
		}
	})
	t.Run("lowercase names", func(t *testing.T) {
		ev := mustParseCorpus(t, "ical4j/korganizer-lowercase.ics", feed.Options{}).Events[0]
		if !ev.Start.AllDay || len(ev.Recurrence) != 1 || !strings.HasPrefix(ev.Recurrence[0], "RRULE:FREQ=YEARLY") {
			t.Errorf("got %+v", ev)
		}
	})
}

func TestCorpusRecurrence(t *testing.T) {
	t.Run("EXDATE with a display-name TZID in the series zone", func(t *testing.T) {
		ev := find(t, mustParseCorpus(t, "ics-parser/ICal.ics", feed.Options{}), bySummary("Microsoft Unicode CLDR EXDATE Test"))
		if len(ev.Recurrence) != 2 || !strings.HasPrefix(ev.Recurrence[1], "EXDATE;TZID=America/New_York:2016") {
			t.Errorf("recurrence %q", ev.Recurrence)
		}
	})
	t.Run("UTC EXDATEs against a zoned series", func(t *testing.T) {
		ev := mustParseCorpus(t, "recurring-ical-events/issue_20_exdate_ignored.ics", feed.Options{}).Events[0]
		ex := ev.Recurrence[len(ev.Recurrence)-1]
		if !strings.HasPrefix(ex, "EXDATE;TZID=Europe/Berlin:") || strings.Contains(strings.SplitN(ex, ":", 2)[1], "Z") {
			t.Errorf("EXDATE %q", ex)
		}
		if !strings.Contains(ev.Recurrence[0], "UNTIL=") || !strings.HasSuffix(strings.Split(strings.Split(ev.Recurrence[0], "UNTIL=")[1], ";")[0], "Z") {
			t.Errorf("RRULE %q: UNTIL not in UTC", ev.Recurrence[0])
		}
	})
	t.Run("UTC UNTIL on an all-day series becomes a date that keeps the last day", func(t *testing.T) {
		ev := find(t, mustParseCorpus(t, "recurring-ical-events/issue_28_rrule_with_UTC_endinginZ.ics", feed.Options{}), func(ev feed.Event) bool {
			return ev.Summary == "Refuse black bin" && ev.RecurrenceID == ""
		})
		if want := "RRULE:FREQ=WEEKLY;UNTIL=20200917;INTERVAL=2;BYDAY=TH;WKST=MO"; ev.Recurrence[0] != want {
			t.Errorf("got %q, want %q", ev.Recurrence[0], want)
		}
	})
	t.Run("date-time RECURRENCE-IDs of an all-day series become dates", func(t *testing.T) {
		cal := mustParseCorpus(t, "recurring-ical-events/issue_28_rrule_with_UTC_endinginZ.ics", feed.Options{})
		find(t, cal, func(ev feed.Event) bool { return ev.RecurrenceID == "20200416" })
		find(t, cal, func(ev feed.Event) bool { return ev.RecurrenceID == "20200528" })
	})
	t.Run("override before its master", func(t *testing.T) {
		cal := mustParseCorpus(t, "khal/mult_uids_and_recuid_no_order.ics", feed.Options{})
		masters := map[string]bool{}
		for _, ev := range cal.Events {
			if ev.RecurrenceID == "" && ev.IsRecurring() {
				masters[ev.UID] = true
			}
		}
		for _, ev := range cal.Events {
			if ev.RecurrenceID != "" && !masters[ev.UID] {
				t.Errorf("override %s has no master", ev.Key())
			}
		}
	})
	t.Run("THISANDFUTURE", func(t *testing.T) {
		n := 0
		for _, ev := range mustParseCorpus(t, "recurring-ical-events/issue_75_range_parameter.ics", feed.Options{}).Events {
			if ev.ThisAndFuture {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%d THISANDFUTURE overrides, want 2", n)
		}
	})
	t.Run("RDATE only", func(t *testing.T) {
		ev := mustParseCorpus(t, "recurring-ical-events/rdate_hackerpublicradio.ics", feed.Options{}).Events[0]
		if len(ev.Recurrence) != 1 || strings.Count(ev.Recurrence[0], ",") != 11 {
			t.Errorf("recurrence %q", ev.Recurrence)
		}
	})
	t.Run("every line is accepted by the RRULE parser", func(t *testing.T) {
		_, files := corpus.Files(t)
		for _, name := range files {
			for _, ev := range mustParseCorpus(t, name, feed.Options{}).Events {
				for _, line := range ev.Recurrence {
					if strings.Contains(line, "TZID=") && !strings.Contains(line, "TZID="+ev.Start.Zone+":") {
						t.Errorf("%s %s: %q not in the series zone %q", name, ev.UID, line, ev.Start.Zone)
					}
				}
			}
		}
	})
}
