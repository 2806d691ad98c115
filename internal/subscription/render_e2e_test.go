package subscription_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

const communityFeed = "../../testdata/feeds/community.ics"

// renderNow is the tests' clock: the sample feeds' weeks.
var renderNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func newRenderHarness(t *testing.T, feedFile string) *harness {
	t.Helper()
	h := newHarness(t, feedFile)
	h.runner.Now = func() time.Time { return renderNow }
	return h
}

func ptr(s string) *string { return &s }

func filter(exclude bool, field, pattern string) config.Filter {
	m := &config.FilterMatch{}
	switch field {
	case "summary":
		m.Summary = &pattern
	case "categories":
		m.Categories = &pattern
	case "description":
		m.Description = &pattern
	}
	if exclude {
		return config.Filter{Exclude: m}
	}
	return config.Filter{Include: m}
}

// live are the summaries of the calendar's events that are not
// cancelled, sorted.
func live(h *harness) []string {
	var out []string
	for _, ev := range h.fake.Events(testCalendar) {
		if ev.Status != "cancelled" {
			out = append(out, ev.Summary)
		}
	}
	slices.Sort(out)
	return out
}

// TestFilteredSubscriptionMirrorsExactlyTheKeptEvents: includes, excludes
// and a title template on the community feed. Google holds the kept
// events, prefixed and coloured, and nothing else; the monthly meetup's
// "Cancelled:" override is a cancelled instance of its series.
func TestFilteredSubscriptionMirrorsExactlyTheKeptEvents(t *testing.T) {
	h := newRenderHarness(t, communityFeed)
	h.cfg.Subscriptions[0].Presentation = config.Presentation{
		Filters: []config.Filter{filter(false, "categories", "(?i)^(meetup|conference)$"), filter(true, "summary", "(?i)^cancel(l)?ed:")},
		Title:   ptr("[Go] {summary}"), Color: ptr("peacock"),
	}
	rep := h.sync()
	// Left out: board games (no category), drinks (Social), the cancelled
	// talk (an exclude), and the meetup's "Cancelled:" override.
	if rep.Run.Outcome != calsyncd.OutcomeOK || rep.Run.Filtered != 4 {
		t.Fatalf("sync: %s, filtered %d (%v); want ok, 4", rep.Run.Outcome, rep.Run.Filtered, rep.Err)
	}
	want := []string{"[Go] Go meetup", "[Go] GopherCon EU (Berlin)", "[Go] Workshop: generics in practice"}
	if got := live(h); !slices.Equal(got, want) {
		t.Fatalf("Google shows %q, want %q", got, want)
	}
	for _, ev := range h.fake.Events(testCalendar) {
		if ev.ColorId != "7" {
			t.Errorf("%q has colour %q, want peacock (7)", ev.Summary, ev.ColorId)
		}
	}
	// The meetup of 6 January is not on the agenda: its override, left out
	// by the exclude, is a cancelled instance of the kept series.
	for _, o := range h.fake.Agenda(testCalendar, time.Date(2027, 1, 5, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 8, 0, 0, 0, 0, time.UTC)) {
		if strings.Contains(o.Summary, "meetup") {
			t.Errorf("the excluded override still shows: %s", o)
		}
	}
	n := 0
	for _, o := range h.fake.Agenda(testCalendar, renderNow, renderNow.AddDate(1, 0, 0)) {
		if o.Summary == "[Go] Go meetup" {
			n++
		}
	}
	if n != 11 {
		t.Errorf("the meetup series shows %d times, want 11 (12 less the cancelled one)", n)
	}
	if st, _ := h.store.Subscription(t.Context(), "team"); st.Filtered != 4 {
		t.Errorf("state filtered = %d, want 4", st.Filtered)
	}
	// A second sync of the unchanged feed costs nothing.
	before := totalWrites(h.writes())
	if h.sync(); totalWrites(h.writes()) != before {
		t.Errorf("the second sync wrote %d times", totalWrites(h.writes())-before)
	}
}

// manyEvents is a feed of n-1 single events and one weekly series.
func manyEvents(n int, summary func(i int) string) []byte {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\nX-WR-CALNAME:Many\r\n")
	b.WriteString("BEGIN:VEVENT\r\nUID:series@x\r\nDTSTART:20261207T090000Z\r\nDTEND:20261207T093000Z\r\nRRULE:FREQ=WEEKLY;COUNT=10\r\nSUMMARY:Weekly\r\nEND:VEVENT\r\n")
	for i := 1; i < n; i++ {
		start := renderNow.Add(time.Duration(i) * time.Hour)
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:ev-%d@x\r\nDTSTART:%s\r\nDTEND:%s\r\nSUMMARY:%s\r\nDESCRIPTION:event %d\r\nEND:VEVENT\r\n",
			i, start.Format("20060102T150405Z"), start.Add(30*time.Minute).Format("20060102T150405Z"), summary(i), i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	return []byte(b.String())
}

// TestChangingColorWritesExactlyTheAffectedEventsOnce: adding a colour to
// a 500-event subscription is 500 updates (the series is one), the next
// sync none, and an unrelated edit one — even from a feed server that
// answers 304 Not Modified, because the policy changed, not the feed.
func TestChangingColorWritesExactlyTheAffectedEventsOnce(t *testing.T) {
	h := newRenderHarness(t, "")
	body := manyEvents(500, func(i int) string { return fmt.Sprintf("Event %d", i) })
	var requests, notModified int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		etag := fmt.Sprintf(`"%x"`, len(body))
		if r.Header.Get("If-None-Match") == etag {
			notModified++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Write(body)
	}))
	defer srv.Close()
	h.cfg.Subscriptions[0].URL = srv.URL + "/many.ics"
	if rep := h.sync(); rep.Run.Created != 500 {
		t.Fatalf("first sync created %d, want 500 (%v)", rep.Run.Created, rep.Err)
	}
	if rep := h.sync(); rep.Run.Outcome != calsyncd.OutcomeNotModified {
		t.Fatalf("unchanged feed: %s, want not_modified", rep.Run.Outcome)
	}
	h.cfg.Subscriptions[0].Color = ptr("banana")
	before := h.writes()
	rep := h.sync()
	after := h.writes()
	if after["update"]-before["update"] != 500 || totalWrites(after)-totalWrites(before) != 500 || rep.Run.Updated != 500 {
		t.Fatalf("adding a colour: %d updates, %d writes (run %+v); want 500 and 500", after["update"]-before["update"], totalWrites(after)-totalWrites(before), rep.Run)
	}
	for _, ev := range h.fake.Events(testCalendar) {
		if ev.ColorId != "5" {
			t.Fatalf("%q has colour %q after the change", ev.Summary, ev.ColorId)
		}
	}
	before = h.writes()
	if rep := h.sync(); rep.Run.Outcome != calsyncd.OutcomeNotModified || totalWrites(h.writes()) != totalWrites(before) {
		t.Fatalf("the sync after the colour change: %s with %d writes, want not_modified and none", rep.Run.Outcome, totalWrites(h.writes())-totalWrites(before))
	}
	body = bytes.Replace(body, []byte("DESCRIPTION:event 7\r\n"), []byte("DESCRIPTION:event 7 (room changed)\r\n"), 1)
	before = h.writes()
	if rep := h.sync(); rep.Run.Updated != 1 || totalWrites(h.writes())-totalWrites(before) != 1 {
		t.Fatalf("an unrelated edit: %d updates, %d writes; want 1 and 1", rep.Run.Updated, totalWrites(h.writes())-totalWrites(before))
	}
	if notModified != 2 {
		t.Errorf("the feed answered 304 %d times, want 2 (the policy change fetched in full)", notModified)
	}
}

// TestTighteningAFilterDeletesOnlyTheNewlyExcluded: an exclude added to a
// filtered subscription deletes exactly the events it now takes out; a
// tightening that would delete most of the calendar is held by the guard,
// which says a filter change caused it.
func TestTighteningAFilterDeletesOnlyTheNewlyExcluded(t *testing.T) {
	h := newRenderHarness(t, "")
	h.setFeed(manyEvents(100, func(i int) string {
		switch {
		case i%10 == 0:
			return fmt.Sprintf("Private %d", i)
		case i%2 == 0:
			return fmt.Sprintf("Optional %d", i)
		}
		return fmt.Sprintf("Event %d", i)
	}))
	s := &h.cfg.Subscriptions[0]
	s.Filters = []config.Filter{filter(true, "summary", "^Private")}
	if rep := h.sync(); rep.Run.Created != 91 || rep.Run.Filtered != 9 {
		t.Fatalf("first sync: created %d filtered %d, want 91 and 9", rep.Run.Created, rep.Run.Filtered)
	}
	ids := map[string]string{}
	for _, ev := range h.fake.Events(testCalendar) {
		ids[ev.Summary] = ev.Id
	}
	// Excluding the optional events takes out 40 of 91: under the guard's
	// half, above its ten; they are deleted.
	s.Filters = append(s.Filters, filter(true, "summary", "^Optional"))
	before := h.writes()
	rep := h.sync()
	after := h.writes()
	if rep.Run.Deleted != 40 || after["delete"]-before["delete"] != 40 || totalWrites(after)-totalWrites(before) != 40 || rep.Run.Filtered != 49 {
		t.Fatalf("tightening: run %+v, writes %v → %v; want 40 deletes and nothing else", rep.Run, before, after)
	}
	for _, ev := range h.fake.Events(testCalendar) {
		if strings.HasPrefix(ev.Summary, "Optional") || strings.HasPrefix(ev.Summary, "Private") || ids[ev.Summary] != ev.Id {
			t.Errorf("left in Google: %q (%s)", ev.Summary, ev.Id)
		}
	}
	if n := len(h.fake.Events(testCalendar)); n != 51 {
		t.Errorf("calendar holds %d events, want 51", n)
	}
	// Including only one event would delete 50 of 51: held, and the
	// state's note and the run say the filters caused it.
	s.Filters = []config.Filter{filter(false, "summary", "^Weekly$")}
	rep = h.sync()
	if rep.Run.Deleted != 0 || rep.Run.HeldDeletes != 50 {
		t.Fatalf("a mass delete by filter: run %+v, want 50 held", rep.Run)
	}
	st, _ := h.store.Subscription(t.Context(), "team")
	found := false
	for _, n := range st.Notes {
		found = found || strings.Contains(n, "50 of the 50 deletes the mass-delete guard holds are events the subscription's filters now exclude")
	}
	if !found {
		t.Errorf("notes %q do not say the filters caused the held deletes", st.Notes)
	}
	if rep := h.syncWith(subscriptionAllowDeletes()); rep.Run.Deleted != 50 || len(h.fake.Events(testCalendar)) != 1 {
		t.Fatalf("allowed: deleted %d, calendar holds %d; want 50 and 1", rep.Run.Deleted, len(h.fake.Events(testCalendar)))
	}
	st, _ = h.store.Subscription(t.Context(), "team")
	for _, n := range st.Notes {
		if strings.HasPrefix(n, "filters: ") {
			t.Errorf("the note stays after the deletes were made: %q", n)
		}
	}
}

// TestPrivacyBusyLeavesNothingToRead: a busy-only subscription shows blocks
// of time titled Busy, private, with no description, location or link.
func TestPrivacyBusyLeavesNothingToRead(t *testing.T) {
	h := newRenderHarness(t, teamFeed)
	h.cfg.Subscriptions[0].Privacy = ptr("busy")
	if rep := h.sync(); rep.Run.Created != 9 {
		t.Fatalf("sync: %+v (%v)", rep.Run, rep.Err)
	}
	for _, ev := range h.fake.AllEvents(testCalendar) {
		if ev.Summary != "Busy" || ev.Description != "" || ev.Location != "" || ev.Source != nil || ev.Visibility != "private" {
			t.Errorf("busy event shows %q desc %q loc %q source %+v visibility %q", ev.Summary, ev.Description, ev.Location, ev.Source, ev.Visibility)
		}
	}
	// The times are still there: a person sees when they are busy.
	if n := len(h.agenda()); n < 10 {
		t.Errorf("agenda has %d occurrences", n)
	}
}

// TestPersonalColourKeptUntilTheSubscriptionSetsOne: a person recolours
// one of our events in Google; a feed edit keeps their colour (412, read,
// write again) until the subscription sets color: then ours win.
func TestPersonalColourKeptUntilTheSubscriptionSetsOne(t *testing.T) {
	h := newRenderHarness(t, teamFeed)
	h.sync()
	var id string
	for _, ev := range h.fake.Events(testCalendar) {
		if ev.Summary == "Quarterly planning" {
			id = ev.Id
		}
	}
	h.fake.Edit(testCalendar, id, func(ev *calendar.Event) { ev.ColorId = "11" })
	h.setFeed(bytes.Replace(h.feed(), []byte("SUMMARY:Quarterly planning"), []byte("SUMMARY:Quarterly planning (Q1)"), 1))
	h.sync()
	colour := func() string {
		for _, ev := range h.fake.Events(testCalendar) {
			if ev.Id == id {
				return ev.Summary + " " + ev.ColorId
			}
		}
		return ""
	}
	if got := colour(); got != "Quarterly planning (Q1) 11" {
		t.Fatalf("after a feed edit: %q, want the person's colour kept", got)
	}
	h.cfg.Subscriptions[0].Color = ptr("sage")
	h.sync()
	if got := colour(); got != "Quarterly planning (Q1) 2" {
		t.Fatalf("after color: sage: %q, want ours", got)
	}
}

// snapshot is the state database's bytes (and its write-ahead log's).
func snapshot(t *testing.T, h *harness) []byte {
	t.Helper()
	var out []byte
	for _, p := range []string{h.dbPath, h.dbPath + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		out = append(append(out, b...), '|')
	}
	return out
}

// TestDryRunWritesNothingAndTheNextSyncDoesWhatItPrinted: after a change
// of feed and policy, a preview leaves Google's write count and the state
// database byte for byte as they were; the real sync then makes the
// writes it listed.
func TestDryRunWritesNothingAndTheNextSyncDoesWhatItPrinted(t *testing.T) {
	h := newRenderHarness(t, communityFeed)
	s := &h.cfg.Subscriptions[0]

	// A first sync's preview reads Google's list of our events (as the
	// sync would, to adopt them) and creates nothing, not even the
	// subscription's row.
	dbBefore, writesBefore := snapshot(t, h), totalWrites(h.writes())
	pv, err := h.runner.Preview(t.Context(), *s, subscription.Options{})
	if err != nil || pv.Err != nil {
		t.Fatal(err, pv.Err)
	}
	if len(pv.Creates) != 7 || pv.Reconcile == nil || !bytes.Equal(snapshot(t, h), dbBefore) || totalWrites(h.writes()) != writesBefore {
		t.Fatalf("first preview: %d creates, reconcile %+v; database unchanged %v, writes %d→%d",
			len(pv.Creates), pv.Reconcile, bytes.Equal(snapshot(t, h), dbBefore), writesBefore, totalWrites(h.writes()))
	}
	if rep := h.sync(); rep.Run.Created != len(pv.Creates) {
		t.Fatalf("the first sync created %d, the preview said %d", rep.Run.Created, len(pv.Creates))
	}

	s.Filters = []config.Filter{filter(true, "categories", "^Social$")}
	s.Color = ptr("tomato")
	h.setFeed(bytes.Replace(h.feed(), []byte("SUMMARY:Board games night"), []byte("SUMMARY:Board games night (new venue)"), 1))
	dbBefore, writesBefore = snapshot(t, h), totalWrites(h.writes())
	pv, err = h.runner.Preview(t.Context(), *s, subscription.Options{})
	if err != nil || pv.Err != nil {
		t.Fatal(err, pv.Err)
	}
	if !bytes.Equal(snapshot(t, h), dbBefore) {
		t.Error("the preview changed the state database")
	}
	if totalWrites(h.writes()) != writesBefore {
		t.Errorf("the preview wrote to Google %d times", totalWrites(h.writes())-writesBefore)
	}
	fields := map[string]string{}
	for _, c := range pv.Updates {
		fields[c.Summary] = strings.Join(c.Fields, ",")
	}
	if fields["Board games night (new venue)"] != "summary,color" || fields["GopherCon EU (Berlin)"] != "color" {
		t.Errorf("updates and their fields: %v", fields)
	}
	if len(pv.Deletes) != 1 || pv.Deletes[0].Summary != "Christmas drinks" || pv.Deletes[0].Reason != subscription.ReasonFiltered ||
		len(pv.Excluded) != 1 || len(pv.Creates) != 0 {
		t.Errorf("deletes %+v, excluded %+v, creates %+v", pv.Deletes, pv.Excluded, pv.Creates)
	}
	rep := h.sync()
	if rep.Run.Created != len(pv.Creates) || rep.Run.Updated != len(pv.Updates) || rep.Run.Deleted != len(pv.Deletes) || rep.Run.Unchanged != pv.Unchanged {
		t.Errorf("the sync did %+v; the preview said %d/%d/%d/%d (created/updated/deleted/unchanged)",
			rep.Run, len(pv.Creates), len(pv.Updates), len(pv.Deletes), pv.Unchanged)
	}
	// Previewed again, nothing is left to do.
	if pv, _ := h.runner.Preview(t.Context(), *s, subscription.Options{}); pv.Writes() != 0 {
		t.Errorf("after the sync the preview still plans %d writes: %+v", pv.Writes(), pv)
	}
}

// TestChangingHowTheFeedIsReadRereadsAn304Feed: a subscription's time_zone
// (for floating times) and window decide what its feed means as much as
// the feed does, so a change of either reads the feed in full on the next
// run, from a feed server that answers 304 Not Modified, and writes what
// the change means; the run after it is not_modified again.
func TestChangingHowTheFeedIsReadRereadsAn304Feed(t *testing.T) {
	body := []byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calsyncd//test//EN\r\n" +
		"BEGIN:VEVENT\r\nUID:floating@example.com\r\nDTSTART:20261210T090000\r\nDTEND:20261210T100000\r\nSUMMARY:Floating\r\nEND:VEVENT\r\n" +
		"BEGIN:VEVENT\r\nUID:old@example.com\r\nDTSTART:20260801T090000Z\r\nDTEND:20260801T100000Z\r\nSUMMARY:Old\r\nEND:VEVENT\r\n" +
		"END:VCALENDAR\r\n")
	h := newRenderHarness(t, "")
	notModified := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			notModified++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Write(body)
	}))
	defer srv.Close()
	sub := &h.cfg.Subscriptions[0]
	sub.URL = srv.URL + "/feed.ics"
	sub.TimeZone = "UTC"
	sub.Window = &config.Window{Past: config.Duration(30 * 24 * time.Hour), Future: config.Duration(365 * 24 * time.Hour)}
	if rep := h.sync(); rep.Run.Created != 1 {
		t.Fatalf("first sync created %d, want the floating event only (%v)", rep.Run.Created, rep.Err)
	}
	if rep := h.sync(); rep.Run.Outcome != calsyncd.OutcomeNotModified {
		t.Fatalf("unchanged feed: %s, want not_modified", rep.Run.Outcome)
	}
	startOf := func(summary string) string {
		for _, ev := range h.fake.Events(testCalendar) {
			if ev.Summary == summary && ev.Status != "cancelled" {
				return ev.Start.DateTime
			}
		}
		return ""
	}
	sub.TimeZone = "America/New_York"
	if rep := h.sync(); rep.Run.Updated != 1 || rep.Run.Outcome == calsyncd.OutcomeNotModified {
		t.Fatalf("after the time_zone change: %s, %d updated; want the floating event moved", rep.Run.Outcome, rep.Run.Updated)
	}
	if got, err := time.Parse(time.RFC3339, startOf("Floating")); err != nil || !got.Equal(time.Date(2026, 12, 10, 14, 0, 0, 0, time.UTC)) {
		t.Errorf("the floating event starts %q, want 09:00 in New York", startOf("Floating"))
	}
	sub.Window.Past = config.Duration(180 * 24 * time.Hour)
	if rep := h.sync(); rep.Run.Created != 1 {
		t.Fatalf("after widening the window: %s, %d created; want the old event", rep.Run.Outcome, rep.Run.Created)
	}
	if startOf("Old") == "" {
		t.Error("the event the wider window takes in is not in Google")
	}
	if rep := h.sync(); rep.Run.Outcome != calsyncd.OutcomeNotModified {
		t.Fatalf("the sync after the changes: %s, want not_modified", rep.Run.Outcome)
	}
	if notModified != 2 {
		t.Errorf("the feed answered 304 %d times, want 2 (each change fetched in full)", notModified)
	}
}
