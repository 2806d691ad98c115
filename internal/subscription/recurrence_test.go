package subscription_test

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/feed/corpus"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/mapping"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// recurrenceNow is the clock of these tests; the window reaches far back so
// that the corpus' old series are mirrored.
var recurrenceNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

const recurrencePast = 25 * 365 * 24 * time.Hour

// mirror is a harness with a fixed clock and a wide window, and the range
// [lo, hi) that the comparison covers: the window, a year into the future.
type mirror struct {
	*harness
	lo, hi time.Time
}

func newMirror(t *testing.T) *mirror {
	h := newHarness(t, "")
	// The emulator in memory, without sockets: these tests write a lot.
	svc, err := calendar.NewService(t.Context(), option.WithEndpoint(gcalfake.Endpoint), option.WithHTTPClient(h.fake.Client("team")))
	if err != nil {
		t.Fatal(err)
	}
	w := gcalwriter.New(svc, gcalwriter.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Spacing: 50 * time.Microsecond})
	h.runner.Writer = func(string) (subscription.Writer, error) { return w, nil }
	h.runner.Now = func() time.Time { return recurrenceNow }
	h.cfg.Window = config.Window{Past: config.Duration(recurrencePast)}
	return &mirror{harness: h, lo: recurrenceNow.Add(-recurrencePast), hi: recurrenceNow.AddDate(1, 0, 0)}
}

// parsed reads the current feed as the runner does.
func (m *mirror) parsed() []feed.Event {
	m.t.Helper()
	sub := m.cfg.Subscriptions[0]
	win := m.cfg.EffectiveWindow(sub)
	cal, err := feed.ParseBytes(m.feed(), feed.Options{DefaultZone: m.cfg.EffectiveTimeZone(sub),
		WindowPast: win.Past.D(), WindowFuture: win.Future.D(), Now: recurrenceNow})
	if err != nil {
		m.t.Fatal(err)
	}
	return cal.Events
}

// check compares what Google shows with what the feed means.
func (m *mirror) check(what string) int {
	m.t.Helper()
	want := expected(m.t, m.parsed(), m.lo, m.hi)
	sameSightings(m.t, what, want, shownBy(m.fake, m.lo, m.hi))
	return len(want)
}

// syncOK syncs and requires a clean run; it returns the run and the writes
// (insert, update, patch, delete requests) it cost.
func (m *mirror) syncOK(what string) (subscription.Report, int) {
	m.t.Helper()
	before := totalWrites(m.writes())
	rep := m.syncWith(subscription.Options{Reconcile: true})
	if rep.Run.Outcome != calsyncd.OutcomeOK {
		m.t.Fatalf("%s: sync ended %s (%v): %+v", what, rep.Run.Outcome, rep.Err, rep.Run)
	}
	return rep, totalWrites(m.writes()) - before
}

func TestRecurringCorpusMirrorsEveryOccurrence(t *testing.T) {
	dir := corpus.Dir(t)
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".ics") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	recurring := 0
	for _, path := range files {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(body, []byte("RRULE")) && !bytes.Contains(body, []byte("RDATE")) && !bytes.Contains(body, []byte("RECURRENCE-ID")) {
			continue
		}
		cal, err := feed.ParseBytes(body, feed.Options{})
		if err != nil {
			continue
		}
		if !hasRecurrence(cal.Events) {
			continue
		}
		recurring++
		name, _ := filepath.Rel(dir, path)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := newMirror(t)
			m.setFeed(body)
			rep, _ := m.syncOK("first sync")
			n := m.check("after the first sync")
			if _, writes := m.syncOK("second sync"); writes != 0 {
				t.Errorf("an unchanged feed cost %d writes", writes)
			}
			t.Logf("%d occurrences from %d events (%d writes)", n, rep.Plan.Creates, rep.Run.Created)
		})
	}
	if recurring < 20 {
		t.Errorf("only %d corpus files have recurring events or overrides", recurring)
	}
}

func hasRecurrence(events []feed.Event) bool {
	for i := range events {
		if events[i].IsRecurring() || events[i].RecurrenceID != "" {
			return true
		}
	}
	return false
}

// calendarOf wraps VEVENTs (and VTIMEZONEs) in a calendar, CRLF.
func calendarOf(parts ...string) []byte {
	body := "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//calsyncd//recurrence test//EN\n" + strings.Join(parts, "") + "END:VCALENDAR\n"
	return []byte(strings.ReplaceAll(body, "\n", "\r\n"))
}

func vevent(lines ...string) string {
	return "BEGIN:VEVENT\n" + strings.Join(lines, "\n") + "\nEND:VEVENT\n"
}

// windowsZone is Outlook's definition of W. Europe Standard Time.
const windowsZone = `BEGIN:VTIMEZONE
TZID:W. Europe Standard Time
BEGIN:STANDARD
DTSTART:16010101T030000
TZOFFSETFROM:+0200
TZOFFSETTO:+0100
RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=10
END:STANDARD
BEGIN:DAYLIGHT
DTSTART:16010101T020000
TZOFFSETFROM:+0100
TZOFFSETTO:+0200
RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=3
END:DAYLIGHT
END:VTIMEZONE
`

// generated are series written the way producers write them.
var generated = map[string][]byte{
	"weekly with BYDAY and COUNT": calendarOf(vevent("UID:standup@example.com", "DTSTART;TZID=Europe/Berlin:20261207T091500",
		"DTEND;TZID=Europe/Berlin:20261207T093000", "RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=40", "SUMMARY:Standup")),
	"monthly BYSETPOS with UNTIL": calendarOf(vevent("UID:report@example.com", "DTSTART;TZID=America/New_York:20261130T160000",
		"DTEND;TZID=America/New_York:20261130T170000", "RRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;UNTIL=20271231T235959Z",
		"SUMMARY:Month-end report")),
	"all-day series with EXDATE and RDATE": calendarOf(vevent("UID:bins@example.com", "DTSTART;VALUE=DATE:20261204",
		"RRULE:FREQ=WEEKLY;INTERVAL=2;UNTIL=20270630", "EXDATE;VALUE=DATE:20261218", "RDATE;VALUE=DATE:20261223", "SUMMARY:Bins")),
	"series across DST in a Windows zone": calendarOf(windowsZone, vevent("UID:jour-fixe@example.com",
		"DTSTART;TZID=W. Europe Standard Time:20270204T100000", "DTEND;TZID=W. Europe Standard Time:20270204T110000",
		"RRULE:FREQ=WEEKLY;UNTIL=20270506T080000Z;INTERVAL=1;BYDAY=TH;WKST=MO", "EXDATE;TZID=W. Europe Standard Time:20270325T100000",
		"SUMMARY:Jour fixe")),
	"moved and cancelled instances": calendarOf(
		vevent("UID:review@example.com", "DTSTART:20261202T140000Z", "DTEND:20261202T150000Z", "RRULE:FREQ=WEEKLY;COUNT=10", "SUMMARY:Review"),
		vevent("UID:review@example.com", "RECURRENCE-ID:20261216T140000Z", "DTSTART:20261217T100000Z", "DTEND:20261217T113000Z", "SUMMARY:Review (moved)"),
		vevent("UID:review@example.com", "RECURRENCE-ID:20261230T140000Z", "DTSTART:20261230T140000Z", "DTEND:20261230T150000Z",
			"SUMMARY:Review", "STATUS:CANCELLED")),
	"this and future": calendarOf(
		vevent("UID:planning@example.com", "DTSTART;TZID=Europe/Berlin:20261207T100000", "DTEND;TZID=Europe/Berlin:20261207T110000",
			"RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=12", "SUMMARY:Planning"),
		vevent("UID:planning@example.com", "RECURRENCE-ID;RANGE=THISANDFUTURE;TZID=Europe/Berlin:20270111T100000",
			"DTSTART;TZID=Europe/Berlin:20270112T093000", "DTEND;TZID=Europe/Berlin:20270112T103000", "SUMMARY:Planning (Tuesdays)"),
		vevent("UID:planning@example.com", "RECURRENCE-ID;TZID=Europe/Berlin:20270125T100000",
			"DTSTART;TZID=Europe/Berlin:20270127T150000", "DTEND;TZID=Europe/Berlin:20270127T160000", "SUMMARY:Planning (moved)")),
	"series Google cannot hold": calendarOf(
		vevent("UID:meds@example.com", "DTSTART:20261202T080000Z", "DTEND:20261202T080500Z", "RRULE:FREQ=HOURLY;INTERVAL=8;COUNT=9",
			"SUMMARY:Medication"),
		// RFC 5545 forbids BYMONTHDAY in a weekly rule; Google refuses it.
		vevent("UID:odd@example.com", "DTSTART;TZID=Europe/Berlin:20261207T120000", "DTEND;TZID=Europe/Berlin:20261207T130000",
			"RRULE:FREQ=WEEKLY;BYMONTHDAY=7,14,21;COUNT=5", "SUMMARY:Odd lunch"),
		vevent("UID:odd@example.com", "RECURRENCE-ID;TZID=Europe/Berlin:20261214T120000",
			"DTSTART;TZID=Europe/Berlin:20261214T123000", "DTEND;TZID=Europe/Berlin:20261214T133000", "SUMMARY:Odd lunch (late)")),
}

func TestGeneratedSeriesMirrorEveryOccurrence(t *testing.T) {
	for name, body := range generated {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := newMirror(t)
			m.setFeed(body)
			m.syncOK("first sync")
			m.check("after the first sync")
			if _, writes := m.syncOK("second sync"); writes != 0 {
				t.Errorf("an unchanged feed cost %d writes", writes)
			}
		})
	}
}

func TestSeriesGoogleCannotHoldAreNotedOnTheSubscription(t *testing.T) {
	m := newMirror(t)
	m.setFeed(generated["series Google cannot hold"])
	rep, _ := m.syncOK("first sync")
	st, err := m.store.Subscription(t.Context(), "team")
	if err != nil {
		t.Fatal(err)
	}
	var note string
	for _, n := range st.Notes {
		if strings.HasPrefix(n, diff.ExpansionNotePrefix) {
			note = n
		}
	}
	if !strings.Contains(note, `"Medication" (Google Calendar has no series more frequent than daily (FREQ=HOURLY))`) ||
		!strings.Contains(note, `"Odd lunch" (Google refused it (HTTP 400 invalid: Invalid recurrence rule.))`) {
		t.Errorf("notes = %q", st.Notes)
	}
	// The refusal cost one insert, and the run is clean: the series is
	// mirrored as single events at once.
	if rep.Run.Rejected != 0 || rep.Run.Created != 9+5 {
		t.Errorf("run: %+v", rep.Run)
	}
	// The next run does not ask Google again.
	if _, writes := m.syncOK("second sync"); writes != 0 {
		t.Errorf("second sync cost %d writes", writes)
	}
	// Fixed at the source, the series becomes a series again.
	m.setFeed([]byte(strings.Replace(string(generated["series Google cannot hold"]), "BYMONTHDAY=7,14,21;", "", 1)))
	m.syncOK("fixed rule")
	m.check("after the rule was fixed")
	st, _ = m.store.Subscription(t.Context(), "team")
	for _, n := range st.Notes {
		if strings.Contains(n, "Odd lunch") {
			t.Errorf("the note still names the fixed series: %q", n)
		}
	}
}

// mutation is a change to a feed and the writes it must cost.
type mutation struct {
	name   string
	edit   func(string) string
	writes int
}

func replace(old, new string) func(string) string {
	return func(s string) string {
		if !strings.Contains(s, old) {
			panic("mutation: " + old + " not in feed")
		}
		return strings.Replace(s, old, new, 1)
	}
}

func TestMutationsCostTheFewestWrites(t *testing.T) {
	tests := map[string]struct {
		feed      []byte
		mutations []mutation
	}{
		"moved and cancelled instances": {generated["moved and cancelled instances"], []mutation{
			{"move a moved instance again", replace("DTSTART:20261217T100000Z\r\nDTEND:20261217T113000Z", "DTSTART:20261218T100000Z\r\nDTEND:20261218T113000Z"), 1},
			{"move another instance", replace("END:VCALENDAR", "BEGIN:VEVENT\r\nUID:review@example.com\r\nRECURRENCE-ID:20270106T140000Z\r\n"+
				"DTSTART:20270106T160000Z\r\nDTEND:20270106T170000Z\r\nSUMMARY:Review (later)\r\nEND:VEVENT\r\nEND:VCALENDAR"), 1},
			{"cancel an instance", replace("END:VCALENDAR", "BEGIN:VEVENT\r\nUID:review@example.com\r\nRECURRENCE-ID:20270113T140000Z\r\n"+
				"DTSTART:20270113T140000Z\r\nDTEND:20270113T150000Z\r\nSUMMARY:Review\r\nSTATUS:CANCELLED\r\nEND:VEVENT\r\nEND:VCALENDAR"), 1},
			{"exclude an instance with EXDATE", replace("RRULE:FREQ=WEEKLY;COUNT=10", "RRULE:FREQ=WEEKLY;COUNT=10\r\nEXDATE:20270120T140000Z"), 1},
			{"take a move back", func(s string) string { return string(removeEvent(t, []byte(s), "RECURRENCE-ID:20261216T140000Z")) }, 1},
			{"shorten the series", replace("COUNT=10", "COUNT=6"), 1},
			{"retitle the series", replace("SUMMARY:Review\r\n", "SUMMARY:Code review\r\n"), 2}, // the series and the instance taken back
			// The series, and the moved instance of 6 January, which is no
			// occurrence any more: it stands alone now.
			{"change the weekday", replace("RRULE:FREQ=WEEKLY;COUNT=6", "RRULE:FREQ=WEEKLY;BYDAY=WE,TH;COUNT=6"), 2},
		}},
		"this and future": {generated["this and future"], []mutation{
			{"split the series again", replace("END:VCALENDAR", "BEGIN:VEVENT\r\nUID:planning@example.com\r\n"+
				"RECURRENCE-ID;RANGE=THISANDFUTURE;TZID=Europe/Berlin:20270208T100000\r\nDTSTART;TZID=Europe/Berlin:20270208T080000\r\n"+
				"DTEND;TZID=Europe/Berlin:20270208T090000\r\nSUMMARY:Planning (early)\r\nEND:VEVENT\r\nEND:VCALENDAR"), 2},
			{"shorten the series", replace("COUNT=12", "COUNT=10"), 1},
		}},
		"all-day series": {generated["all-day series with EXDATE and RDATE"], []mutation{
			{"end it earlier", replace("UNTIL=20270630", "UNTIL=20270331"), 1},
			{"move one collection", replace("END:VCALENDAR", "BEGIN:VEVENT\r\nUID:bins@example.com\r\nRECURRENCE-ID;VALUE=DATE:20270115\r\n"+
				"DTSTART;VALUE=DATE:20270116\r\nSUMMARY:Bins (Saturday)\r\nEND:VEVENT\r\nEND:VCALENDAR"), 1},
		}},
	}
	// The write counts hold wherever Google keeps exceptions on a series
	// update and hides those off its rule, whatever the other readings
	// (the others cost repairs: TestSmallFeedsConvergeUnderEveryReading).
	var readings []gcalfake.Readings
	for _, r := range gcalfake.AllReadings() {
		if r.SeriesUpdate == gcalfake.ExceptionsKept && r.OffRule == gcalfake.OffRuleHidden && r.PropertyRepeats == gcalfake.PropertiesAnd {
			readings = append(readings, r)
		}
	}
	for name, tt := range tests {
		for _, r := range readings {
			t.Run(name+"/"+r.String(), func(t *testing.T) {
				t.Parallel()
				m := newMirror(t)
				m.fake.SetReadings(r)
				mutateAndCount(t, m, tt.feed, tt.mutations)
			})
		}
	}
}

func mutateAndCount(t *testing.T, m *mirror, feed []byte, mutations []mutation) {
	t.Helper()
	body := string(feed)
	m.setFeed([]byte(body))
	m.syncOK("first sync")
	m.check("after the first sync")
	for _, mu := range mutations {
		body = mu.edit(body)
		m.setFeed([]byte(body))
		rep, writes := m.syncOK(mu.name)
		if os.Getenv("DEBUG_PLAN") != "" {
			t.Logf("%s: %+v", mu.name, rep.Plan)
		}
		m.check("after: " + mu.name)
		if writes != mu.writes {
			t.Errorf("%s: %d writes, want %d", mu.name, writes, mu.writes)
		}
		t.Logf("%s: %d writes", mu.name, writes)
	}
}

func TestSeriesRecreatedUnderANewIDGetsItsExceptionsBack(t *testing.T) {
	m := newMirror(t)
	m.setFeedFile(teamFeed)
	m.syncOK("first sync")
	master := byTitle(t, m.harness, "Team sync")
	// A person deletes the series and empties the bin: its id is burnt.
	m.fake.Delete(testCalendar, master.Id)
	m.fake.EmptyBin(testCalendar)
	m.setFeed([]byte(strings.Replace(string(m.feed()), "LOCATION:Room 2.01\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:team-sync-2026",
		"LOCATION:Room 2.02\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:team-sync-2026", 1)))
	m.syncOK("series changed")
	m.syncOK("exceptions written again")
	m.check("after the series was recreated")
	if byTitle(t, m.harness, "Team sync").Id == master.Id {
		t.Error("the series kept its burnt id")
	}
}

func TestOverridesWrittenAsSingleEventsMoveIntoTheirSeries(t *testing.T) {
	m := newMirror(t)
	body, err := os.ReadFile(teamFeed)
	if err != nil {
		t.Fatal(err)
	}
	// An earlier calsyncd wrote overrides as events of their own, under
	// our deterministic id for their key.
	m.setFeed(removeEvent(t, body, "RECURRENCE-ID;TZID=Europe/Berlin:20261221T093000"))
	m.syncOK("series without the move")
	m.setFeed(body)
	var moved feed.Event
	for _, ev := range m.parsed() {
		if ev.RecurrenceID == "20261221T083000Z" {
			moved = ev
		}
	}
	legacy := gcalwriter.ToGoogle("", "team", &moved)
	legacy.Id = mapping.EventID("", "team", moved.Key(), 0)
	m.fake.Seed(testCalendar, legacy)
	if err := m.store.PutMapping(t.Context(), "team", calsyncd.Mapping{Key: moved.Key(), EventID: legacy.Id, Hash: moved.Hash}); err != nil {
		t.Fatal(err)
	}
	_, writes := m.syncOK("upgrade")
	m.check("after the upgrade")
	// The old event deleted, the instance written.
	if writes != 2 {
		t.Errorf("upgrade cost %d writes, want 2", writes)
	}
}

// A series whose every occurrence the feed comes to exclude is gone from the
// feed, not outside the window: Google's copy is deleted, not kept as an
// event of the past.
func TestSeriesWithEveryOccurrenceExcludedIsDeleted(t *testing.T) {
	const head = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calsyncd//test//EN\r\n"
	const other = "BEGIN:VEVENT\r\nUID:other@example.com\r\nDTSTART:20270110T090000Z\r\nDTEND:20270110T100000Z\r\nSUMMARY:Other\r\nEND:VEVENT\r\n"
	series := func(exdate string) []byte {
		return []byte(head + other + "BEGIN:VEVENT\r\nUID:weekly@example.com\r\nDTSTART:20270105T100000Z\r\nDTEND:20270105T110000Z\r\n" +
			"RRULE:FREQ=WEEKLY;COUNT=3\r\n" + exdate + "SUMMARY:Weekly\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
	}
	for _, r := range gcalfake.CoveringReadings() {
		t.Run(r.String(), func(t *testing.T) {
			m := newMirror(t)
			m.fake.SetReadings(r)
			m.setFeed(series(""))
			m.syncOK("first sync")
			if n := m.check("after the first sync"); n != 4 {
				t.Fatalf("%d occurrences after the first sync, want 4", n)
			}
			m.setFeed(series("EXDATE:20270105T100000Z,20270112T100000Z,20270119T100000Z\r\n"))
			rep, _ := m.syncOK("every occurrence excluded")
			if n := m.check("after every occurrence was excluded"); n != 1 {
				t.Errorf("%d occurrences, want only the other event's", n)
			}
			if rep.Run.Deleted != 1 {
				t.Errorf("deleted %d events, want the series", rep.Run.Deleted)
			}
		})
	}
}
