package gcalwriter_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	calendar "google.golang.org/api/calendar/v3"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// feedEvents parses VEVENTs as the feed package does and shapes them for
// Google.
func feedEvents(t *testing.T, vevents ...string) []feed.Event {
	t.Helper()
	body := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\n" + strings.Join(vevents, "") + "END:VCALENDAR\r\n"
	c, err := feed.ParseBytes([]byte(body), feed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return diff.Shape(c.Events, diff.ShapeOptions{From: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
		To: time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC), Unsupported: gcalwriter.UnsupportedRecurrence}).Events
}

func vevent(lines ...string) string {
	return "BEGIN:VEVENT\r\n" + strings.Join(lines, "\r\n") + "\r\nEND:VEVENT\r\n"
}

func seriesVEvent(rule string) string {
	return vevent("UID:sync@example.com", "DTSTART;TZID=Europe/Berlin:20270104T093000", "DTEND;TZID=Europe/Berlin:20270104T100000",
		"RRULE:"+rule, "SUMMARY:Team sync")
}

var (
	movedVEvent = vevent("UID:sync@example.com", "RECURRENCE-ID;TZID=Europe/Berlin:20270111T093000",
		"DTSTART;TZID=Europe/Berlin:20270112T140000", "DTEND;TZID=Europe/Berlin:20270112T150000", "SUMMARY:Team sync (Tuesday)")
	cancelledVEvent = vevent("UID:sync@example.com", "RECURRENCE-ID;TZID=Europe/Berlin:20270118T093000",
		"DTSTART;TZID=Europe/Berlin:20270118T093000", "DTEND;TZID=Europe/Berlin:20270118T100000", "SUMMARY:Team sync", "STATUS:CANCELLED")
)

// plan computes the ops from the persisted mappings.
func plan(p *memPersister, desired []feed.Event) []diff.Op {
	return diff.Compute(desired, p.mappings(), p.rejections()).Ops()
}

func agendaOf(fake *gcalfake.Server) []string {
	var out []string
	for _, o := range fake.Agenda(cal, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)) {
		out = append(out, o.String())
	}
	return out
}

func TestOverridesBecomeExceptionsOfTheirSeries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		p := newMem()
		series := seriesVEvent("FREQ=WEEKLY;BYDAY=MO;COUNT=4")
		res := apply(t, w, p, plan(p, feedEvents(t, series, movedVEvent, cancelledVEvent))...)
		if res.Created != 3 || res.Err != nil {
			t.Fatalf("first write: %+v", res)
		}
		want := []string{
			`2027-01-04T08:30:00Z..2027-01-04T09:00:00Z "Team sync"`,
			`2027-01-12T13:00:00Z..2027-01-12T14:00:00Z "Team sync (Tuesday)"`,
			`2027-01-25T08:30:00Z..2027-01-25T09:00:00Z "Team sync"`,
		}
		if got := agendaOf(h.fake); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("agenda =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// One insert for the series; the first exception reads its
		// instance by the id Google derives (and so learns that Google
		// derives ids), every later one is a single update of that id.
		if ops := requestsOf(h.recs["alice"].requests()); fmt.Sprint(ops) != "[POST GET PUT PUT]" {
			t.Errorf("requests = %v", ops)
		}
		moved := p.mapping(calsyncd.Key{UID: "sync@example.com", RecurrenceID: "20270111T083000Z"})
		master := p.mapping(calsyncd.Key{UID: "sync@example.com"})
		if !strings.HasPrefix(moved.EventID, master.EventID+"_") || moved.ETag == "" || moved.EndsAt.IsZero() {
			t.Errorf("exception mapping = %+v (series %s)", moved, master.EventID)
		}

		// The move is taken back and the series renamed: the series costs
		// one update, the former exception one update back to the series.
		renamed := strings.Replace(series, "SUMMARY:Team sync", "SUMMARY:Weekly sync", 1)
		ops2 := plan(p, feedEvents(t, renamed, cancelledVEvent))
		res = apply(t, w, p, ops2...)
		if res.Updated != 2 || res.Created+res.Deleted+res.Forgotten != 0 {
			t.Fatalf("second write: %+v", res)
		}
		want = []string{
			`2027-01-04T08:30:00Z..2027-01-04T09:00:00Z "Weekly sync"`,
			`2027-01-11T08:30:00Z..2027-01-11T09:00:00Z "Weekly sync"`,
			`2027-01-25T08:30:00Z..2027-01-25T09:00:00Z "Weekly sync"`,
		}
		if got := agendaOf(h.fake); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("agenda =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if ops := plan(p, feedEvents(t, renamed, cancelledVEvent)); len(ops) != 0 {
			t.Errorf("a third run would write %d times", len(ops))
		}

		// The series shrinks to two instances: one update; the cancelled
		// exception past its end is forgotten without a request.
		before := len(h.recs["alice"].writes())
		shorter := strings.Replace(renamed, "COUNT=4", "COUNT=2", 1)
		res = apply(t, w, p, plan(p, feedEvents(t, shorter, cancelledVEvent))...)
		if res.Updated != 1 || res.Forgotten != 1 || len(h.recs["alice"].writes())-before != 1 {
			t.Fatalf("shortened: %+v, %d writes", res, len(h.recs["alice"].writes())-before)
		}
		if got := agendaOf(h.fake); len(got) != 2 {
			t.Errorf("agenda after shortening = %q", got)
		}
	})
}

// requestsOf names the event requests (the calendars.get of each batch left
// out): "instances" for events.instances, else the method.
func requestsOf(qs []request) []string {
	var ops []string
	for _, q := range qs {
		switch {
		case strings.HasSuffix(q.path, "/instances"):
			ops = append(ops, "instances")
		case strings.Contains(q.path, "/events"):
			ops = append(ops, q.method)
		}
	}
	return ops
}

func TestLostDatabaseAdoptsExceptionsWithoutWriting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		desired := feedEvents(t, seriesVEvent("FREQ=WEEKLY;COUNT=4"), movedVEvent, cancelledVEvent)
		apply(t, w, newMem(), plan(newMem(), desired)...)
		before := len(h.recs["alice"].writes())
		p := newMem()
		res := apply(t, w, p, plan(p, desired)...)
		// The series' insert answers 409 and is adopted; the exceptions are
		// found as they are. Nothing is rewritten.
		writes := h.recs["alice"].writes()[before:]
		if res.Created != 3 || res.Adopted != 1 || len(writes) != 1 || writes[0].method != http.MethodPost {
			t.Errorf("after losing the mappings: %+v, writes %+v", res, writes)
		}
		if len(p.mappings()) != 3 {
			t.Errorf("mappings rebuilt: %d, want 3", len(p.mappings()))
		}
	})
}

func TestRefusedSeriesLeavesItsExceptionsUnparented(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		p := newMem()
		// RFC 5545 forbids BYMONTHDAY in a weekly rule; Google refuses it.
		desired := feedEvents(t, seriesVEvent("FREQ=WEEKLY;BYMONTHDAY=4,11,18,25;COUNT=4"), movedVEvent)
		res := apply(t, w, p, plan(p, desired)...)
		if res.Rejected != 1 || res.Unparented != 1 || len(res.RefusedSeries) != 1 || res.RefusedSeries[0] != (calsyncd.Key{UID: "sync@example.com"}) {
			t.Fatalf("result: %+v", res)
		}
		if rj := p.rejections(); len(rj) != 1 || !strings.Contains(rj[0].Reason, "Invalid recurrence rule") {
			t.Errorf("rejections = %+v", rj)
		}
		if n := len(h.recs["alice"].writes()); n != 1 {
			t.Errorf("%d writes, want the one refused insert", n)
		}
	})
}

func TestUnsupportedRecurrence(t *testing.T) {
	for rule, want := range map[string]bool{
		"RRULE:FREQ=HOURLY;COUNT=3":  true,
		"RRULE:FREQ=MINUTELY":        true,
		"RRULE:FREQ=DAILY;BYHOUR=9":  false,
		"RRULE:FREQ=WEEKLY;BYDAY=MO": false,
	} {
		ev := &feed.Event{Start: feed.Time{T: time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC)}, Recurrence: []string{rule}}
		series, err := feed.ParseSeries(ev)
		if err != nil {
			t.Fatal(err)
		}
		ev.SetSeries(series)
		if got := gcalwriter.UnsupportedRecurrence(ev) != ""; got != want {
			t.Errorf("%s: unsupported %v, want %v", rule, got, want)
		}
	}
}

// allDaySeries is a weekly all-day series from Monday 4 January 2027.
var allDaySeries = vevent("UID:bins@example.com", "DTSTART;VALUE=DATE:20270104", "DTEND;VALUE=DATE:20270105",
	"RRULE:FREQ=WEEKLY;COUNT=8", "EXDATE;VALUE=DATE:20270111", "SUMMARY:Bins")

func allDayOverride(date, start string, extra ...string) string {
	return vevent(append([]string{"UID:bins@example.com", "RECURRENCE-ID;VALUE=DATE:" + date, "DTSTART;VALUE=DATE:" + start,
		"SUMMARY:Bins"}, extra...)...)
}

func timedOverride(rid, start, end string, extra ...string) string {
	return vevent(append([]string{"UID:sync@example.com", "RECURRENCE-ID;TZID=Europe/Berlin:" + rid,
		"DTSTART;TZID=Europe/Berlin:" + start, "DTEND;TZID=Europe/Berlin:" + end, "SUMMARY:Team sync"}, extra...)...)
}

// Under every reading of instance ids and of originalStart's date form,
// each override lands on the instance at its original start, the first
// instance stays, and, once the writer has learnt how the account's Google
// answers, an override costs one request where Google derives instance ids
// and two (a checked lookup and the update) where it does not.
func TestOverridesLandOnTheirOwnInstanceUnderEveryReading(t *testing.T) {
	shapes := []struct {
		name   string
		series string
		first  []string // overrides of the first batch
		later  string   // one more override, the second batch
		agenda []string
	}{
		{"all-day", allDaySeries,
			[]string{allDayOverride("20270125", "20270125", "STATUS:CANCELLED"), allDayOverride("20270201", "20270203")},
			allDayOverride("20270215", "20270215", "STATUS:CANCELLED"),
			[]string{`2027-01-04..2027-01-05 "Bins"`, `2027-01-18..2027-01-19 "Bins"`, `2027-02-03..2027-02-04 "Bins"`,
				`2027-02-08..2027-02-09 "Bins"`, `2027-02-22..2027-02-23 "Bins"`}},
		{"timed", seriesVEvent("FREQ=WEEKLY;COUNT=6"),
			[]string{timedOverride("20270118T093000", "20270118T093000", "20270118T100000", "STATUS:CANCELLED"),
				timedOverride("20270111T093000", "20270112T140000", "20270112T150000")},
			timedOverride("20270201T093000", "20270201T093000", "20270201T100000", "STATUS:CANCELLED"),
			[]string{`2027-01-04T08:30:00Z..2027-01-04T09:00:00Z "Team sync"`, `2027-01-12T13:00:00Z..2027-01-12T14:00:00Z "Team sync"`,
				`2027-01-25T08:30:00Z..2027-01-25T09:00:00Z "Team sync"`,
				`2027-02-08T08:30:00Z..2027-02-08T09:00:00Z "Team sync"`}},
	}
	for _, sh := range shapes {
		for _, mode := range []gcalfake.AllDayOriginalStart{gcalfake.OriginalStartHonoured, gcalfake.OriginalStartIgnored, gcalfake.OriginalStartRejected} {
			for _, ids := range []gcalfake.InstanceIDs{gcalfake.InstanceIDsDerived, gcalfake.InstanceIDsOpaque} {
				for _, filters := range []gcalfake.Filters{gcalfake.FiltersExact, gcalfake.FiltersLoose} {
					r := gcalfake.Readings{AllDayOriginalStart: mode, InstanceIDs: ids, Filters: filters}
					t.Run(sh.name+"/"+r.String(), func(t *testing.T) {
						synctest.Test(t, func(t *testing.T) {
							h := newHarness(t, gcalfake.Options{Readings: r})
							w := h.writer("alice", gcalwriter.Options{})
							p := newMem()
							vevents := append([]string{sh.series}, sh.first...)
							if res := apply(t, w, p, plan(p, feedEvents(t, vevents...))...); res.Failed+res.Rejected != 0 || res.Err != nil {
								t.Fatalf("first batch: %+v", res)
							}
							before := len(h.recs["alice"].requests())
							res := apply(t, w, p, plan(p, feedEvents(t, append(vevents, sh.later)...))...)
							if res.Created != 1 || res.Failed != 0 {
								t.Fatalf("second batch: %+v", res)
							}
							got := requestsOf(h.recs["alice"].requests()[before:])
							want := "[PUT]"
							switch {
							case ids == gcalfake.InstanceIDsDerived:
							case mode == gcalfake.OriginalStartRejected && sh.name == "all-day":
								// The first batch's two overrides were found
								// in one listing of the series: this first
								// single lookup learns that the date form is
								// refused (400), then the window finds it.
								want = "[instances instances PUT]"
							default:
								want = "[instances PUT]"
							}
							if fmt.Sprint(got) != want {
								t.Errorf("one more override cost %v, want %s", got, want)
							}
							agenda := agendaOf(h.fake)
							if fmt.Sprint(agenda) != fmt.Sprint(sh.agenda) {
								t.Errorf("agenda =\n%s\nwant\n%s", strings.Join(agenda, "\n"), strings.Join(sh.agenda, "\n"))
							}
							if ops := plan(p, feedEvents(t, append(vevents, sh.later)...)); len(ops) != 0 {
								t.Errorf("a third batch would write %d times", len(ops))
							}
						})
					})
				}
			}
		}
	}
}

// A derived id is only written blind once Google has shown that it names
// the instance at its original start, and then only with If-Match: the
// series' etag, so an exception already stored there (a person's edit) is
// read before it is overwritten and keeps the person's colour.
func TestDerivedWriteNeverOverwritesUnread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		p := newMem()
		first := []string{allDaySeries, allDayOverride("20270125", "20270125", "STATUS:CANCELLED")}
		apply(t, w, p, plan(p, feedEvents(t, first...))...)
		master := p.mapping(calsyncd.Key{UID: "bins@example.com"})
		// A person colours the instance of 1 February.
		h.fake.Edit(cal, master.EventID+"_20270201", func(ev *calendar.Event) { ev.ColorId = "5" })
		before := len(h.recs["alice"].requests())
		res := apply(t, w, p, plan(p, feedEvents(t, append(first, allDayOverride("20270201", "20270202", "SUMMARY:Bins (Tuesday)"))...))...)
		if res.Created != 1 || res.Failed != 0 {
			t.Fatalf("result: %+v", res)
		}
		reqs := h.recs["alice"].requests()[before:]
		if got := requestsOf(reqs); fmt.Sprint(got) != "[PUT GET PUT]" {
			t.Errorf("requests = %v, want the conditional update refused, a read, the update", got)
		}
		for _, q := range reqs {
			if q.method == http.MethodPut && q.ifMatch == "" {
				t.Errorf("an instance written without If-Match: %+v", q)
			}
		}
		var ev *calendar.Event
		for _, e := range h.fake.AllEvents(cal) {
			if e.Id == master.EventID+"_20270201" {
				ev = e
			}
		}
		if ev == nil || ev.ColorId != "5" || ev.Start.Date != "2027-02-02" {
			t.Errorf("instance = %+v", ev)
		}
	})
}

// Whatever an update of a series does to its exceptions in Google (kept,
// rewritten from the series, dropped) and whether exceptions left off a
// changed rule still show, the writer checks them after the series' write
// (one listing) and repairs what changed: the calendar shows the feed.
// Where Google keeps them, the check costs that read and no write.
func TestSeriesUpdateRepairsItsExceptions(t *testing.T) {
	series := seriesVEvent("FREQ=WEEKLY;COUNT=4")
	retitled := strings.Replace(series, "SUMMARY:Team sync", "SUMMARY:Weekly sync", 1)
	excluded := strings.Replace(retitled, "COUNT=4", "COUNT=4\r\nEXDATE;TZID=Europe/Berlin:20270125T093000", 1)
	// The series moves half an hour later: the moved and cancelled
	// instances are off its rule; the moved one stands alone.
	later := strings.NewReplacer("T093000", "T100000", "T100000", "T103000").Replace(retitled)
	steps := []struct {
		name   string
		feed   []string
		agenda []string
	}{
		{"retitled", []string{retitled, movedVEvent, cancelledVEvent}, []string{
			`2027-01-04T08:30:00Z..2027-01-04T09:00:00Z "Weekly sync"`,
			`2027-01-12T13:00:00Z..2027-01-12T14:00:00Z "Team sync (Tuesday)"`,
			`2027-01-25T08:30:00Z..2027-01-25T09:00:00Z "Weekly sync"`}},
		{"excluded", []string{excluded, movedVEvent, cancelledVEvent}, []string{
			`2027-01-04T08:30:00Z..2027-01-04T09:00:00Z "Weekly sync"`,
			`2027-01-12T13:00:00Z..2027-01-12T14:00:00Z "Team sync (Tuesday)"`}},
		{"moved", []string{later, movedVEvent, cancelledVEvent}, []string{
			`2027-01-04T09:00:00Z..2027-01-04T09:30:00Z "Weekly sync"`,
			`2027-01-11T09:00:00Z..2027-01-11T09:30:00Z "Weekly sync"`,
			`2027-01-12T13:00:00Z..2027-01-12T14:00:00Z "Team sync (Tuesday)"`,
			`2027-01-18T09:00:00Z..2027-01-18T09:30:00Z "Weekly sync"`,
			`2027-01-25T09:00:00Z..2027-01-25T09:30:00Z "Weekly sync"`}},
	}
	for _, update := range []gcalfake.SeriesUpdate{gcalfake.ExceptionsKept, gcalfake.ExceptionsPropagated, gcalfake.ExceptionsDropped} {
		for _, off := range []gcalfake.OffRule{gcalfake.OffRuleHidden, gcalfake.OffRuleKept} {
			for _, ids := range []gcalfake.InstanceIDs{gcalfake.InstanceIDsDerived, gcalfake.InstanceIDsOpaque} {
				r := gcalfake.Readings{SeriesUpdate: update, OffRule: off, InstanceIDs: ids}
				t.Run(r.String(), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						h := newHarness(t, gcalfake.Options{Readings: r})
						w := h.writer("alice", gcalwriter.Options{})
						p := newMem()
						apply(t, w, p, plan(p, feedEvents(t, series, movedVEvent, cancelledVEvent))...)
						for _, st := range steps {
							before := len(h.recs["alice"].requests())
							res := apply(t, w, p, plan(p, feedEvents(t, st.feed...))...)
							if res.Failed+res.Rejected != 0 || res.Err != nil {
								t.Fatalf("%s: %+v", st.name, res)
							}
							if got := agendaOf(h.fake); fmt.Sprint(got) != fmt.Sprint(st.agenda) {
								t.Errorf("%s: agenda =\n%s\nwant\n%s", st.name, strings.Join(got, "\n"), strings.Join(st.agenda, "\n"))
							}
							if ops := plan(p, feedEvents(t, st.feed...)); len(ops) != 0 {
								t.Errorf("%s: the next batch would write %d times", st.name, len(ops))
							}
							got := requestsOf(h.recs["alice"].requests()[before:])
							if update == gcalfake.ExceptionsKept && off == gcalfake.OffRuleHidden && st.name == "retitled" &&
								fmt.Sprint(got) != "[PUT instances]" {
								t.Errorf("%s: requests %v, want the series' update and one check", st.name, got)
							}
							if deleted := strings.Contains(fmt.Sprint(got), "DELETE"); st.name == "moved" &&
								deleted != (off == gcalfake.OffRuleKept && update != gcalfake.ExceptionsDropped) {
								t.Errorf("%s: requests %v: the exceptions off the rule are deleted where, and only where, Google still shows them", st.name, got)
							}
							t.Logf("%s: %v", st.name, got)
						}
					})
				})
			}
		}
	}
}

// An answer to an instance write that names another instance is never
// taken as done: the write counts as failed, nothing is recorded for it,
// and the writer stops writing derived ids (for a day): it looks up first.
func TestMisdirectedAnswerIsNotTakenAsDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		p := newMem()
		first := []string{allDaySeries, allDayOverride("20270125", "20270125", "STATUS:CANCELLED")}
		apply(t, w, p, plan(p, feedEvents(t, first...))...)
		// Google now answers instance writes with another instance.
		h.recs["alice"].mu.Lock()
		h.recs["alice"].answer = func(req *http.Request, resp *http.Response) *http.Response {
			if req.Method != http.MethodPut || resp.StatusCode != http.StatusOK {
				return resp
			}
			var ev calendar.Event
			body, _ := io.ReadAll(resp.Body)
			if json.Unmarshal(body, &ev) == nil && ev.OriginalStartTime != nil {
				ev.OriginalStartTime.Date = "2027-01-04"
				body, _ = json.Marshal(&ev)
			}
			resp.Body = io.NopCloser(bytes.NewReader(body))
			resp.ContentLength = int64(len(body))
			return resp
		}
		h.recs["alice"].mu.Unlock()
		moved := allDayOverride("20270201", "20270202", "SUMMARY:Bins (Tuesday)")
		res := apply(t, w, p, plan(p, feedEvents(t, append(first, moved)...))...)
		if res.Failed != 1 || res.Created != 0 {
			t.Errorf("result: %+v", res)
		}
		if m := p.mapping(calsyncd.Key{UID: "bins@example.com", RecurrenceID: "20270201"}); m.EventID != "" {
			t.Errorf("recorded %+v", m)
		}
		if !strings.Contains(h.logs.String(), "answered the instance at 2027-01-04") {
			t.Errorf("log:\n%s", h.logs.String())
		}
		// The next attempt looks the instance up before writing it.
		before := len(h.recs["alice"].requests())
		apply(t, w, p, plan(p, feedEvents(t, append(first, moved)...))...)
		if got := requestsOf(h.recs["alice"].requests()[before:]); len(got) == 0 || got[0] == http.MethodPut {
			t.Errorf("after a misdirected answer: %v, want a read first", got)
		}
	})
}

// An instance a person moved far from its original start, which we hold no
// mapping for, is still found by its original start (a listing of the whole
// series, when the window around the original start misses it), under
// every reading of instance ids and of originalStart's date form.
func TestInstanceMovedFarByAPersonIsFound(t *testing.T) {
	for _, mode := range []gcalfake.AllDayOriginalStart{gcalfake.OriginalStartHonoured, gcalfake.OriginalStartIgnored, gcalfake.OriginalStartRejected} {
		for _, ids := range []gcalfake.InstanceIDs{gcalfake.InstanceIDsDerived, gcalfake.InstanceIDsOpaque} {
			r := gcalfake.Readings{AllDayOriginalStart: mode, InstanceIDs: ids}
			t.Run(r.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					h := newHarness(t, gcalfake.Options{Readings: r})
					w := h.writer("alice", gcalwriter.Options{})
					p := newMem()
					apply(t, w, p, plan(p, feedEvents(t, allDaySeries))...)
					master := p.mapping(calsyncd.Key{UID: "bins@example.com"})
					id := h.fake.InstanceID(cal, master.EventID, time.Date(2027, 2, 15, 0, 0, 0, 0, time.UTC))
					// A person moves the 15 February bins to 10 March.
					h.fake.Edit(cal, id, func(ev *calendar.Event) {
						ev.Start = &calendar.EventDateTime{Date: "2027-03-10"}
						ev.End = &calendar.EventDateTime{Date: "2027-03-11"}
					})
					// The feed then cancels that occurrence.
					res := apply(t, w, p, plan(p, feedEvents(t, allDaySeries, allDayOverride("20270215", "20270215", "STATUS:CANCELLED")))...)
					if res.Created != 1 || res.Failed != 0 || res.Err != nil {
						t.Fatalf("result: %+v", res)
					}
					for _, o := range h.fake.Agenda(cal, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC)) {
						if strings.Contains(o.String(), "2027-03-10") || strings.Contains(o.String(), "2027-02-15") {
							t.Errorf("the cancelled occurrence still shows: %s", o)
						}
					}
					if n := len(agendaOf(h.fake)); n != 6 {
						t.Errorf("%d occurrences shown, want the other 6: %v", n, agendaOf(h.fake))
					}
				})
			})
		}
	}
}
