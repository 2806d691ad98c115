package gcalwriter_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// manySeries is a feed of n weekly series (all-day or timed), all in the
// same weeks, and the override of each: series i moves (and retitles) its
// instance of week 1+i%4 by one day.
type manySeries struct {
	allDay bool
}

func (m manySeries) uid(i int) string { return fmt.Sprintf("s%02d@example.com", i) }

func (m manySeries) series(i int) string {
	if m.allDay {
		return vevent("UID:"+m.uid(i), "DTSTART;VALUE=DATE:20270104", "DTEND;VALUE=DATE:20270105",
			"RRULE:FREQ=WEEKLY;COUNT=6", fmt.Sprintf("SUMMARY:S%02d", i))
	}
	return vevent("UID:"+m.uid(i), fmt.Sprintf("DTSTART;TZID=Europe/Berlin:20270104T%02d0000", 7+i%12),
		fmt.Sprintf("DTEND;TZID=Europe/Berlin:20270104T%02d3000", 7+i%12), "RRULE:FREQ=WEEKLY;COUNT=6", fmt.Sprintf("SUMMARY:S%02d", i))
}

// original is the original start of series i's override.
func (m manySeries) original(i int) time.Time {
	day := time.Date(2027, 1, 4+7*(1+i%4), 0, 0, 0, 0, time.UTC)
	if m.allDay {
		return day
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	return time.Date(day.Year(), day.Month(), day.Day(), 7+i%12, 0, 0, 0, berlin).UTC()
}

func (m manySeries) override(i int) string {
	o := m.original(i)
	summary := fmt.Sprintf("SUMMARY:S%02d moved", i)
	if m.allDay {
		return vevent("UID:"+m.uid(i), "RECURRENCE-ID;VALUE=DATE:"+o.Format("20060102"),
			"DTSTART;VALUE=DATE:"+o.AddDate(0, 0, 1).Format("20060102"), summary)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	ob := o.In(berlin)
	return vevent("UID:"+m.uid(i), "RECURRENCE-ID;TZID=Europe/Berlin:"+ob.Format("20060102T150405"),
		"DTSTART;TZID=Europe/Berlin:"+ob.AddDate(0, 0, 1).Format("20060102T150405"),
		"DTEND;TZID=Europe/Berlin:"+ob.AddDate(0, 0, 1).Add(30*time.Minute).Format("20060102T150405"), summary)
}

// checkLanded checks that each of series 0..n-1 shows its override at its
// own instance, moved by a day, and nothing else moved.
func (m manySeries) checkLanded(t *testing.T, fake *gcalfake.Server, p *memPersister, n int) {
	t.Helper()
	ids := map[string]int{}
	for i := range n {
		ids[p.mapping(calsyncd.Key{UID: m.uid(i)}).EventID] = i
	}
	moved := map[int]int{}
	for _, o := range fake.Agenda(cal, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)) {
		i, ours := ids[o.SeriesID]
		if !ours || !strings.HasSuffix(o.Summary, " moved") {
			continue
		}
		moved[i]++
		if o.Summary != fmt.Sprintf("S%02d moved", i) || !o.OriginalStart.Equal(m.original(i)) ||
			!o.Start.Equal(m.original(i).AddDate(0, 0, 1)) {
			t.Errorf("series %d shows %s (original start %s), want its override of %s a day later", i, o, o.OriginalStart, m.original(i))
		}
	}
	for i := range n {
		if moved[i] != 1 {
			t.Errorf("series %d shows its override %d times, want once", i, moved[i])
		}
	}
}

// personsEvents seeds a person's single event and weekly series in the
// same weeks as the feed's (the series with the same start as the feed's
// first), and returns their etags by id.
func personsEvents(fake *gcalfake.Server, allDay bool) map[string]string {
	single := &calendar.Event{Summary: "Dentist", Start: &calendar.EventDateTime{DateTime: "2027-01-12T10:00:00Z"},
		End: &calendar.EventDateTime{DateTime: "2027-01-12T11:00:00Z"}}
	series := &calendar.Event{Summary: "Gym", Recurrence: []string{"RRULE:FREQ=WEEKLY;COUNT=6"},
		Start: &calendar.EventDateTime{DateTime: "2027-01-04T06:00:00Z", TimeZone: "UTC"},
		End:   &calendar.EventDateTime{DateTime: "2027-01-04T07:00:00Z", TimeZone: "UTC"}}
	if allDay {
		series.Start, series.End = &calendar.EventDateTime{Date: "2027-01-04"}, &calendar.EventDateTime{Date: "2027-01-05"}
	}
	out := map[string]string{}
	for _, ev := range []*calendar.Event{single, series} {
		got := fake.Seed(cal, ev)
		out[got.Id] = got.Etag
	}
	return out
}

// checkUntouched checks that the person's events are as seeded and that
// no exception of theirs was stored.
func checkUntouched(t *testing.T, fake *gcalfake.Server, etags map[string]string) {
	t.Helper()
	for _, ev := range fake.AllEvents(cal) {
		if want, ok := etags[ev.Id]; ok && ev.Etag != want {
			t.Errorf("a person's %q was written: etag %s, seeded %s", ev.Summary, ev.Etag, want)
		}
		if _, ok := etags[ev.RecurringEventId]; ok {
			t.Errorf("an instance of a person's series was written: %s %q", ev.Id, ev.Summary)
		}
	}
}

// Where instance ids are opaque, the overrides of many different series in
// one batch cost one listing of the calendar and one update each, not a
// lookup and an update each; every override lands on its own instance
// under every reading of originalStart's date form and of filters, and a
// person's events in the same weeks are left alone.
func TestOverridesOfManySeriesShareOneListing(t *testing.T) {
	const n = 21 // series 0's override teaches the writer; 20 follow
	for _, m := range []manySeries{{allDay: true}, {allDay: false}} {
		for _, mode := range []gcalfake.AllDayOriginalStart{gcalfake.OriginalStartHonoured, gcalfake.OriginalStartIgnored, gcalfake.OriginalStartRejected} {
			for _, filters := range []gcalfake.Filters{gcalfake.FiltersExact, gcalfake.FiltersLoose} {
				r := gcalfake.Readings{AllDayOriginalStart: mode, InstanceIDs: gcalfake.InstanceIDsOpaque, Filters: filters}
				t.Run(fmt.Sprintf("allday=%v/%s", m.allDay, r), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						h := newHarness(t, gcalfake.Options{Readings: r})
						w := h.writer("alice", gcalwriter.Options{})
						p := newMem()
						etags := personsEvents(h.fake, m.allDay)
						var vevents []string
						for i := range n {
							vevents = append(vevents, m.series(i))
						}
						// The first batch: the series, and one override that
						// teaches the writer the ids are opaque.
						first := append(vevents, m.override(0))
						if res := apply(t, w, p, plan(p, feedEvents(t, first...))...); res.Failed+res.Rejected != 0 || res.Err != nil {
							t.Fatalf("first batch: %+v", res)
						}
						all := first
						for i := 1; i < n; i++ {
							all = append(all, m.override(i))
						}
						before := len(h.recs["alice"].requests())
						res := apply(t, w, p, plan(p, feedEvents(t, all...))...)
						if res.Created != n-1 || res.Failed != 0 || res.Err != nil {
							t.Fatalf("second batch: %+v", res)
						}
						got := requestsOf(h.recs["alice"].requests()[before:])
						want := "[GET" + strings.Repeat(" PUT", n-1) + "]"
						if fmt.Sprint(got) != want {
							t.Errorf("%d overrides of as many series cost %v, want %s", n-1, got, want)
						}
						m.checkLanded(t, h.fake, p, n)
						checkUntouched(t, h.fake, etags)
						if ops := plan(p, feedEvents(t, all...)); len(ops) != 0 {
							t.Errorf("a third batch would write %d times", len(ops))
						}
					})
				})
			}
		}
	}
}

// An override whose instance the calendar's listing does not hold is
// still found, by the lookups of its own, and lands on its instance.
func TestOverrideMissingFromTheCalendarListingIsLookedUp(t *testing.T) {
	const n, dropped = 6, 3
	for _, m := range []manySeries{{allDay: true}, {allDay: false}} {
		for _, mode := range []gcalfake.AllDayOriginalStart{gcalfake.OriginalStartHonoured, gcalfake.OriginalStartIgnored, gcalfake.OriginalStartRejected} {
			r := gcalfake.Readings{AllDayOriginalStart: mode, InstanceIDs: gcalfake.InstanceIDsOpaque}
			t.Run(fmt.Sprintf("allday=%v/%s", m.allDay, r), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					h := newHarness(t, gcalfake.Options{Readings: r})
					w := h.writer("alice", gcalwriter.Options{})
					p := newMem()
					var vevents []string
					for i := range n {
						vevents = append(vevents, m.series(i))
					}
					first := append(vevents, m.override(0))
					if res := apply(t, w, p, plan(p, feedEvents(t, first...))...); res.Failed+res.Rejected != 0 || res.Err != nil {
						t.Fatalf("first batch: %+v", res)
					}
					missing := p.mapping(calsyncd.Key{UID: m.uid(dropped)}).EventID
					var listings, removed int
					h.recs["alice"].mu.Lock()
					h.recs["alice"].answer = func(req *http.Request, resp *http.Response) *http.Response {
						if req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/events") || req.URL.Query().Get("singleEvents") != "true" {
							return resp
						}
						listings++
						var page calendar.Events
						body, _ := io.ReadAll(resp.Body)
						if json.Unmarshal(body, &page) == nil {
							var keep []*calendar.Event
							for _, it := range page.Items {
								if it.RecurringEventId == missing {
									removed++
									continue
								}
								keep = append(keep, it)
							}
							page.Items = keep
							body, _ = json.Marshal(&page)
						}
						resp.Body = io.NopCloser(bytes.NewReader(body))
						resp.ContentLength = int64(len(body))
						return resp
					}
					h.recs["alice"].mu.Unlock()
					all := first
					for i := 1; i < n; i++ {
						all = append(all, m.override(i))
					}
					before := len(h.recs["alice"].requests())
					res := apply(t, w, p, plan(p, feedEvents(t, all...))...)
					if res.Created != n-1 || res.Failed != 0 || res.Err != nil {
						t.Fatalf("second batch: %+v", res)
					}
					if listings != 1 || removed == 0 {
						t.Fatalf("%d calendar listings, %d items of series %d left out; want 1 listing that leaves it out", listings, removed, dropped)
					}
					var puts, lookups int
					for _, q := range requestsOf(h.recs["alice"].requests()[before:]) {
						switch q {
						case http.MethodPut:
							puts++
						case "instances":
							lookups++
						}
					}
					if puts != n-1 || lookups == 0 {
						t.Errorf("%d updates and %d lookups, want %d updates and the missing one's lookups", puts, lookups, n-1)
					}
					m.checkLanded(t, h.fake, p, n)
				})
			})
		}
	}
}

// The overrides of a single series share one listing of its own instances,
// not of the calendar's, where ids are opaque too.
func TestOverridesOfOneSeriesShareItsListing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{Readings: gcalfake.Readings{InstanceIDs: gcalfake.InstanceIDsOpaque}})
		w := h.writer("alice", gcalwriter.Options{})
		p := newMem()
		first := []string{allDaySeries, allDayOverride("20270118", "20270118", "STATUS:CANCELLED")}
		if res := apply(t, w, p, plan(p, feedEvents(t, first...))...); res.Failed+res.Rejected != 0 || res.Err != nil {
			t.Fatalf("first batch: %+v", res)
		}
		all := append(first, allDayOverride("20270125", "20270126"), allDayOverride("20270201", "20270203"),
			allDayOverride("20270208", "20270208", "STATUS:CANCELLED"))
		before := len(h.recs["alice"].requests())
		if res := apply(t, w, p, plan(p, feedEvents(t, all...))...); res.Created != 3 || res.Failed != 0 || res.Err != nil {
			t.Fatalf("second batch: %+v", res)
		}
		if got := requestsOf(h.recs["alice"].requests()[before:]); fmt.Sprint(got) != "[instances PUT PUT PUT]" {
			t.Errorf("3 overrides of one series cost %v, want [instances PUT PUT PUT]", got)
		}
		want := []string{`2027-01-04..2027-01-05 "Bins"`, `2027-01-26..2027-01-27 "Bins"`, `2027-02-03..2027-02-04 "Bins"`,
			`2027-02-15..2027-02-16 "Bins"`, `2027-02-22..2027-02-23 "Bins"`}
		if got := agendaOf(h.fake); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("agenda =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// The calendar's listing may show instances of a series a person deleted
// (cancelled, as "single deleted instances"): an override of that series
// is never written there; its own lookup finds the series gone.
func TestCancelledItemsOfTheCalendarListingAreNotWritten(t *testing.T) {
	const n, deleted = 4, 2
	m := manySeries{}
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{Readings: gcalfake.Readings{InstanceIDs: gcalfake.InstanceIDsOpaque}})
		w := h.writer("alice", gcalwriter.Options{})
		p := newMem()
		var vevents []string
		for i := range n {
			vevents = append(vevents, m.series(i))
		}
		first := append(vevents, m.override(0))
		if res := apply(t, w, p, plan(p, feedEvents(t, first...))...); res.Failed+res.Rejected != 0 || res.Err != nil {
			t.Fatalf("first batch: %+v", res)
		}
		gone := p.mapping(calsyncd.Key{UID: m.uid(deleted)}).EventID
		h.fake.Delete(cal, gone)
		const ghost = "ghostinstance"
		h.recs["alice"].mu.Lock()
		h.recs["alice"].answer = func(req *http.Request, resp *http.Response) *http.Response {
			if req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/events") || req.URL.Query().Get("singleEvents") != "true" {
				return resp
			}
			var page calendar.Events
			body, _ := io.ReadAll(resp.Body)
			if json.Unmarshal(body, &page) == nil {
				page.Items = append(page.Items, &calendar.Event{Id: ghost, Status: "cancelled", RecurringEventId: gone,
					Etag: `"1"`, OriginalStartTime: &calendar.EventDateTime{DateTime: m.original(deleted).Format(time.RFC3339)},
					Start: &calendar.EventDateTime{DateTime: m.original(deleted).Format(time.RFC3339)},
					End:   &calendar.EventDateTime{DateTime: m.original(deleted).Add(30 * time.Minute).Format(time.RFC3339)}})
				body, _ = json.Marshal(&page)
			}
			resp.Body = io.NopCloser(bytes.NewReader(body))
			resp.ContentLength = int64(len(body))
			return resp
		}
		h.recs["alice"].mu.Unlock()
		all := first
		for i := 1; i < n; i++ {
			all = append(all, m.override(i))
		}
		before := len(h.recs["alice"].requests())
		res := apply(t, w, p, plan(p, feedEvents(t, all...))...)
		if res.Created != n-2 || res.Failed != 1 {
			t.Errorf("second batch: %+v, want the deleted series' override failed and the others created", res)
		}
		for _, q := range h.recs["alice"].requests()[before:] {
			if q.write() && strings.Contains(q.path, ghost) {
				t.Errorf("wrote the listed instance of a deleted series: %s %s", q.method, q.path)
			}
		}
	})
}
