package render_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/render"
)

var t0 = time.Date(2027, 1, 11, 9, 0, 0, 0, time.UTC)

// event is a timed single event; opts adjust it.
func event(uid, summary string, opts ...func(*feed.Event)) feed.Event {
	ev := feed.Event{UID: uid, Summary: summary, Start: feed.Time{T: t0}, End: feed.Time{T: t0.Add(time.Hour)},
		Status: feed.StatusConfirmed, Transparency: feed.TransparencyOpaque, Visibility: feed.VisibilityDefault}
	for _, o := range opts {
		o(&ev)
	}
	ev.Hash = ev.ComputeHash()
	return ev
}

func categories(c ...string) func(*feed.Event) {
	return func(ev *feed.Event) {
		if ev.Details == nil {
			ev.Details = &feed.Details{}
		}
		ev.Details.Categories = c
	}
}

func override(rid string) func(*feed.Event) { return func(ev *feed.Event) { ev.RecurrenceID = rid } }

func series(ev *feed.Event) { ev.Recurrence = []string{"RRULE:FREQ=WEEKLY;COUNT=4"} }

func allDay(ev *feed.Event) {
	ev.Start = feed.Time{AllDay: true, T: time.Date(2027, 1, 11, 0, 0, 0, 0, time.UTC)}
	ev.End = feed.Time{AllDay: true, T: time.Date(2027, 1, 12, 0, 0, 0, 0, time.UTC)}
}

func rule(t *testing.T, exclude bool, field, pattern string) render.Rule {
	t.Helper()
	r, err := render.NewRule(exclude, field, pattern)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func keys(evs []feed.Event) string {
	var out []string
	for _, ev := range evs {
		s := ev.UID
		if ev.RecurrenceID != "" {
			s += "/" + ev.RecurrenceID
		}
		if ev.Status == feed.StatusCancelled {
			s += "(cancelled)"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// TestFilterFields: each field, matched as the documentation says.
func TestFilterFields(t *testing.T) {
	plain := event("plain", "Standup")
	rich := event("rich", "Canceled: Review", categories("Work", "Review"), allDay, func(ev *feed.Event) {
		ev.Description, ev.Location = "Agenda", "Room 1"
		ev.Status, ev.Transparency, ev.Visibility = feed.StatusTentative, feed.TransparencyTransparent, feed.VisibilityPrivate
	})
	odd := event("odd", "x", func(ev *feed.Event) { ev.Details = &feed.Details{Class: "X-SECRET"} })
	for _, tc := range []struct {
		field, pattern string
		want           string // the events an include keeps
	}{
		{"summary", "(?i)^canceled:", "rich"},
		{"summary", "Standup", "plain"},
		{"description", "^$", "odd plain"},
		{"location", "Room", "rich"},
		{"categories", "(?i)^work$", "rich"},
		{"categories", "^Review$", "rich"},
		{"categories", "^$", "odd plain"}, // no categories: one empty category
		{"class", "^PUBLIC$", "plain"},
		{"class", "^PRIVATE$", "odd rich"}, // X-SECRET is treated as PRIVATE
		{"class", "^X-", "odd"},
		{"status", "^CONFIRMED$", "odd plain"},
		{"status", "^TENTATIVE$", "rich"},
		{"transp", "^TRANSPARENT$", "rich"},
		{"transp", "^OPAQUE$", "odd plain"},
		{"all_day", "^true$", "rich"},
		{"all_day", "^false$", "odd plain"},
	} {
		t.Run(tc.field+" "+tc.pattern, func(t *testing.T) {
			evs := []feed.Event{odd, plain, rich}
			p := &render.Policy{Filters: []render.Rule{rule(t, false, tc.field, tc.pattern)}}
			if got := keys(mustRender(t, evs, p, render.Context{}).Events); got != tc.want {
				t.Errorf("include keeps %q, want %q", got, tc.want)
			}
			p = &render.Policy{Filters: []render.Rule{rule(t, true, tc.field, tc.pattern)}}
			res := mustRender(t, evs, p, render.Context{})
			if got := keys(res.Excluded); got != tc.want {
				t.Errorf("exclude takes out %q, want %q", got, tc.want)
			}
			if len(res.Events)+len(res.Excluded) != 3 {
				t.Errorf("kept %d + excluded %d != 3", len(res.Events), len(res.Excluded))
			}
		})
	}
}

// TestFilterCombination: at least one include (when there is one), no
// exclude; the order of the rules does not matter.
func TestFilterCombination(t *testing.T) {
	evs := []feed.Event{
		event("a", "Work: plan", categories("Work")),
		event("b", "Canceled: Work sync", categories("Work")),
		event("c", "Lunch", categories("Private")),
		event("d", "Gym"),
	}
	for _, tc := range []struct {
		name  string
		rules func(t *testing.T) []render.Rule
		want  string
	}{
		{"no filters", func(*testing.T) []render.Rule { return nil }, "a b c d"},
		{"one include", func(t *testing.T) []render.Rule {
			return []render.Rule{rule(t, false, "categories", "^Work$")}
		}, "a b"},
		{"two includes: either", func(t *testing.T) []render.Rule {
			return []render.Rule{rule(t, false, "categories", "^Work$"), rule(t, false, "summary", "^Gym$")}
		}, "a b d"},
		{"include then exclude", func(t *testing.T) []render.Rule {
			return []render.Rule{rule(t, false, "categories", "^Work$"), rule(t, true, "summary", "(?i)^(canceled|cancelled):")}
		}, "a"},
		{"exclude then include", func(t *testing.T) []render.Rule {
			return []render.Rule{rule(t, true, "summary", "(?i)^(canceled|cancelled):"), rule(t, false, "categories", "^Work$")}
		}, "a"},
		{"only excludes", func(t *testing.T) []render.Rule {
			return []render.Rule{rule(t, true, "categories", "^Private$"), rule(t, true, "summary", "^Gym$")}
		}, "a b"},
		{"case matters without (?i)", func(t *testing.T) []render.Rule {
			return []render.Rule{rule(t, false, "categories", "^work$")}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mustRender(t, evs, &render.Policy{Filters: tc.rules(t)}, render.Context{})
			if got := keys(res.Events); got != tc.want {
				t.Errorf("kept %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFilterDecidesSeriesByMaster: a series is kept or left out by its
// master; a kept series keeps its overrides, one an exclude matches
// becomes a cancelled instance; an override without its series in the
// feed is decided on its own.
func TestFilterDecidesSeriesByMaster(t *testing.T) {
	evs := []feed.Event{
		event("gone", "Gym", series),
		event("gone", "Gym (moved)", override("20270118T090000Z")),
		event("kept", "Work sync", series, categories("Work")),
		event("kept", "Canceled: Work sync", override("20270118T090000Z")), // no categories: still kept
		event("kept", "Work sync (moved)", override("20270125T090000Z")),
		event("kept", "Work sync", override("20270201T090000Z"), func(ev *feed.Event) { ev.Status = feed.StatusCancelled }),
		event("orphan", "Work party", override("20270301T090000Z"), categories("Work")),
		event("orphan2", "Canceled: party", override("20270301T090000Z"), categories("Work")),
	}
	p := &render.Policy{Filters: []render.Rule{rule(t, false, "categories", "^Work$"), rule(t, true, "summary", "^Canceled:")}}
	res := mustRender(t, evs, p, render.Context{})
	want := "kept kept/20270118T090000Z(cancelled) kept/20270125T090000Z kept/20270201T090000Z(cancelled) orphan/20270301T090000Z"
	if got := keys(res.Events); got != want {
		t.Errorf("kept\n %s\nwant\n %s", got, want)
	}
	// The series left out counts once; the override cancelled by the
	// exclude and the orphan left out count too; the override the feed
	// itself cancelled does not.
	if got := keys(res.Excluded); got != "gone kept/20270118T090000Z orphan2/20270301T090000Z" {
		t.Errorf("excluded %q", got)
	}
}

// TestTitleTemplate: placeholders, literal braces, and the errors a
// configuration gets for an unknown placeholder or an unclosed brace.
func TestTitleTemplate(t *testing.T) {
	ev := event("a", "Planning", categories("Work", "Q1"), func(ev *feed.Event) { ev.Location = "Room 4" })
	c := render.Context{Subscription: "team", CalendarName: "Platform team"}
	for _, tc := range []struct{ template, want, err string }{
		{"[Team] {summary}", "[Team] Planning", ""},
		{"{summary} @ {location}", "Planning @ Room 4", ""},
		{"{summary} ({categories})", "Planning (Work, Q1)", ""},
		{"{calendar_name}: {summary}", "Platform team: Planning", ""},
		{"{subscription}/{summary}", "team/Planning", ""},
		{"{{literal}} {summary}", "{literal} Planning", ""},
		{"a }} b", "a } b", ""},
		{"  {summary}  ", "Planning", ""},
		{"no placeholders", "no placeholders", ""},
		{"{title}", "", "unknown placeholder {title}"},
		{"{Summary}", "", "unknown placeholder {Summary}"},
		{"{summary", "", "unclosed {"},
	} {
		t.Run(tc.template, func(t *testing.T) {
			title, err := render.ParseTitle(tc.template)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res := mustRender(t, []feed.Event{ev}, &render.Policy{Title: title}, c)
			if got := res.Events[0].Summary; got != tc.want {
				t.Errorf("title %q, want %q", got, tc.want)
			}
		})
	}
}

// TestColorNames: Google's eleven event colours by id and by name.
func TestColorNames(t *testing.T) {
	names := []string{"lavender", "sage", "grape", "flamingo", "banana", "tangerine", "peacock", "graphite", "blueberry", "basil", "tomato"}
	for i, name := range names {
		id := fmt.Sprint(i + 1)
		for _, in := range []string{id, name, strings.ToUpper(name), " " + name + " "} {
			if got, err := render.ParseColor(in); err != nil || got != id {
				t.Errorf("ParseColor(%q) = %q, %v; want %s", in, got, err, id)
			}
		}
		if render.ColorName(id) != name {
			t.Errorf("ColorName(%s) = %q", id, render.ColorName(id))
		}
	}
	for _, bad := range []string{"0", "12", "01", "red", "1.0", "-1"} {
		if _, err := render.ParseColor(bad); err == nil || !strings.Contains(err.Error(), "unknown colour") {
			t.Errorf("ParseColor(%q): %v, want an unknown colour error", bad, err)
		}
	}
	if got, err := render.ParseColor(""); got != "" || err != nil {
		t.Errorf(`ParseColor("") = %q, %v`, got, err)
	}
}

// TestPrivacyBusy: a block of time and nothing else — title "Busy" (or
// the template's), no description, location or link, visibility private
// whatever the feed or the visibility key says.
func TestPrivacyBusy(t *testing.T) {
	ev := event("a", "Therapy", func(ev *feed.Event) {
		ev.Description, ev.Location, ev.URL, ev.Visibility = "Dr. X", "Clinic", "https://x.example/a", feed.VisibilityPublic
	})
	cancelled := event("a", "Therapy (moved)", override("20270118T090000Z"), func(ev *feed.Event) {
		ev.Status, ev.Description, ev.Location = feed.StatusCancelled, "Dr. X", "Clinic"
	})
	title, _ := render.ParseTitle("[Private] {subscription}")
	for _, tc := range []struct {
		name  string
		title *render.Title
		want  string
	}{{"plain", nil, "Busy"}, {"with a title", title, "[Private] me"}} {
		t.Run(tc.name, func(t *testing.T) {
			p := &render.Policy{Privacy: render.Busy, Title: tc.title, Visibility: feed.VisibilityPublic}
			res := mustRender(t, []feed.Event{ev, cancelled}, p, render.Context{Subscription: "me"})
			got := res.Events[0]
			if got.Summary != tc.want || got.Description != "" || got.Location != "" || got.URL != "" || got.Visibility != feed.VisibilityPrivate {
				t.Errorf("busy event = %+v", got)
			}
			if c := res.Events[1]; c.Summary != "Busy" || c.Description != "" || c.Location != "" {
				t.Errorf("busy cancelled instance = %+v", c)
			}
			if got.Hash == ev.Hash || got.Hash != got.ComputeHash() {
				t.Errorf("the hash does not follow what is shown")
			}
		})
	}
}

// TestVisibilityAndTransparency: feed keeps the feed's; the others set
// Google's value. Only events whose value changes get a new hash.
func TestVisibilityAndTransparency(t *testing.T) {
	opaque := event("a", "x")
	free := event("b", "y", func(ev *feed.Event) { ev.Transparency = feed.TransparencyTransparent })
	vis, _ := render.ParseVisibility("public")
	tr, _ := render.ParseTransparency("free")
	res := mustRender(t, []feed.Event{opaque, free}, &render.Policy{Visibility: vis, Transparency: tr}, render.Context{})
	if a, b := res.Events[0], res.Events[1]; a.Visibility != "public" || a.Transparency != "transparent" || b.Transparency != "transparent" {
		t.Errorf("rendered %+v / %+v", a, b)
	}
	res = mustRender(t, []feed.Event{opaque, free}, &render.Policy{Transparency: tr}, render.Context{})
	if res.Events[0].Hash == opaque.Hash || res.Events[1].Hash != free.Hash {
		t.Errorf("transparency: free rewrote %v, want only the opaque event", []bool{res.Events[0].Hash != opaque.Hash, res.Events[1].Hash != free.Hash})
	}
	for _, bad := range []func() error{
		func() error { _, err := render.ParseVisibility("confidential"); return err },
		func() error { _, err := render.ParseTransparency("opaque"); return err },
		func() error { _, err := render.ParsePrivacy("hidden"); return err },
	} {
		if bad() == nil {
			t.Error("an unknown value was accepted")
		}
	}
}

func alarms(absolute int, a ...feed.Alarm) func(*feed.Event) {
	return func(ev *feed.Event) { ev.Details = &feed.Details{Alarms: a, AbsoluteAlarms: absolute} }
}

// TestRemindersFromTheFeed: DISPLAY and AUDIO ring as popups, EMAIL as
// emails, minutes before the start; an absolute trigger, one after the
// start, one beyond 4 weeks, an unknown action and a sixth reminder are
// skipped and counted for the subscription's note.
func TestRemindersFromTheFeed(t *testing.T) {
	feedMode := render.Reminders{Mode: render.ReminderFeed}
	for _, tc := range []struct {
		name    string
		event   feed.Event
		want    string
		skipped render.SkippedAlarms
	}{
		{"none in the feed", event("a", "x"), "", render.SkippedAlarms{}},
		{"display, audio, email", event("a", "x", alarms(0, feed.Alarm{Action: "DISPLAY", Before: 15 * time.Minute},
			feed.Alarm{Action: "AUDIO", Before: 0}, feed.Alarm{Action: "EMAIL", Before: 24 * time.Hour})),
			"popup:0,popup:15,email:1440", render.SkippedAlarms{}},
		{"rounded to the minute, twins once", event("a", "x", alarms(0, feed.Alarm{Action: "DISPLAY", Before: 10*time.Minute + 40*time.Second},
			feed.Alarm{Action: "AUDIO", Before: 11 * time.Minute})), "popup:11", render.SkippedAlarms{}},
		{"absolute trigger", event("a", "x", alarms(2, feed.Alarm{Action: "DISPLAY", Before: 5 * time.Minute})),
			"popup:5", render.SkippedAlarms{Absolute: 2}},
		{"after the start", event("a", "x", alarms(0, feed.Alarm{Action: "DISPLAY", Before: -5 * time.Minute})),
			"", render.SkippedAlarms{AfterStart: 1}},
		{"4 weeks is the most", event("a", "x", alarms(0, feed.Alarm{Action: "EMAIL", Before: render.MaxReminderBefore},
			feed.Alarm{Action: "EMAIL", Before: render.MaxReminderBefore + time.Minute})), "email:40320", render.SkippedAlarms{TooEarly: 1}},
		{"unknown action", event("a", "x", alarms(0, feed.Alarm{Action: "PROCEDURE", Before: time.Minute})),
			"", render.SkippedAlarms{Action: 1}},
		{"five nearest kept", event("a", "x", alarms(0, feed.Alarm{Action: "DISPLAY", Before: 60 * time.Minute},
			feed.Alarm{Action: "DISPLAY", Before: 1 * time.Minute}, feed.Alarm{Action: "DISPLAY", Before: 2 * time.Minute},
			feed.Alarm{Action: "DISPLAY", Before: 3 * time.Minute}, feed.Alarm{Action: "DISPLAY", Before: 4 * time.Minute},
			feed.Alarm{Action: "DISPLAY", Before: 5 * time.Minute})), "popup:1,popup:2,popup:3,popup:4,popup:5",
			render.SkippedAlarms{OverLimit: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mustRender(t, []feed.Event{tc.event}, &render.Policy{Timed: feedMode}, render.Context{})
			st := res.Events[0].Style
			if st == nil || st.Reminders == nil || st.Reminders.UseDefault {
				t.Fatalf("style = %+v, want the feed's reminders (none is a setting too)", st)
			}
			if got := st.Reminders.String(); got != tc.want {
				t.Errorf("reminders %q, want %q", got, tc.want)
			}
			if res.Skipped != tc.skipped {
				t.Errorf("skipped %+v, want %+v", res.Skipped, tc.skipped)
			}
		})
	}
	note := render.SkippedAlarms{Absolute: 2, OverLimit: 1}.Note()
	if !strings.HasPrefix(note, render.NotePrefix) || !strings.Contains(note, "3 of the feed's alarms") || !strings.Contains(note, "2 with an absolute trigger") {
		t.Errorf("note = %q", note)
	}
}

// TestRemindersByKind: timed and all-day events follow their own setting;
// an unset one leaves the event's reminders (a person's) alone.
func TestRemindersByKind(t *testing.T) {
	timed, day := event("a", "x"), event("b", "y", allDay)
	popup, _ := render.ParseReminder("popup", 10*time.Minute)
	for _, tc := range []struct {
		name          string
		timedR, dayR  render.Reminders
		wantT, wantAD string
	}{
		{"default and none", render.Reminders{Mode: render.ReminderDefault}, render.Reminders{Mode: render.ReminderNone}, "default", ""},
		{"list for timed only", render.Reminders{Mode: render.ReminderList, List: []feed.Reminder{popup}}, render.Reminders{}, "popup:10", "<unset>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mustRender(t, []feed.Event{timed, day}, &render.Policy{Timed: tc.timedR, AllDay: tc.dayR}, render.Context{})
			show := func(ev feed.Event) string {
				if ev.Style == nil || ev.Style.Reminders == nil {
					return "<unset>"
				}
				return ev.Style.Reminders.String()
			}
			if got := show(res.Events[0]); got != tc.wantT {
				t.Errorf("timed: %q, want %q", got, tc.wantT)
			}
			if got := show(res.Events[1]); got != tc.wantAD {
				t.Errorf("all-day: %q, want %q", got, tc.wantAD)
			}
		})
	}
}

// TestGoogleLimits: what a configuration may list, checked up front.
func TestGoogleLimits(t *testing.T) {
	for _, tc := range []struct {
		method string
		before time.Duration
		err    string
	}{
		{"popup", 0, ""},
		{"email", 40320 * time.Minute, ""},
		{"popup", 40321 * time.Minute, "0 to 40320 minutes"},
		{"popup", 90 * time.Second, "whole minutes"},
		{"sms", time.Minute, "unknown reminder method"},
	} {
		_, err := render.ParseReminder(tc.method, tc.before)
		if (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseReminder(%s, %s) = %v, want %q", tc.method, tc.before, err, tc.err)
		}
	}
	five := slices.Repeat([]feed.Reminder{{Method: "popup", Minutes: 1}}, 5)
	if err := render.CheckReminderList(five); err != nil {
		t.Errorf("five reminders: %v", err)
	}
	if err := render.CheckReminderList(append(five, feed.Reminder{Method: "email", Minutes: 2})); err == nil || !strings.Contains(err.Error(), "at most 5") {
		t.Errorf("six reminders: %v", err)
	}
	if _, err := render.ParseReminderMode("sometimes"); err == nil {
		t.Error("an unknown reminder mode was accepted")
	}
	if _, err := render.NewRule(false, "title", "x"); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("unknown field: %v", err)
	}
	if _, err := render.NewRule(false, "summary", "(?<=x)"); err == nil || !strings.Contains(err.Error(), "RE2") {
		t.Errorf("a pattern RE2 refuses: %v", err)
	}
}

// TestZeroPolicyChangesNothing: a subscription that sets none of the keys
// renders the feed as it is, hashes and all, and has no fingerprint.
func TestZeroPolicyChangesNothing(t *testing.T) {
	evs := []feed.Event{event("a", "x"), event("b", "y", allDay)}
	for _, p := range []*render.Policy{nil, {}, {Privacy: render.Full}} {
		res := mustRender(t, evs, p, render.Context{})
		if !slices.EqualFunc(res.Events, evs, func(a, b feed.Event) bool { return a.Hash == b.Hash && a.Summary == b.Summary && a.Style == nil }) {
			t.Errorf("policy %+v changed the events", p)
		}
		if p.Fingerprint() != "" || !p.IsZero() {
			t.Errorf("policy %+v has fingerprint %q", p, p.Fingerprint())
		}
	}
	a := &render.Policy{ColorID: "5"}
	b := &render.Policy{ColorID: "6"}
	if a.Fingerprint() == "" || a.Fingerprint() == b.Fingerprint() || a.Fingerprint() != (&render.Policy{ColorID: "5"}).Fingerprint() {
		t.Errorf("fingerprints %q %q", a.Fingerprint(), b.Fingerprint())
	}
}

// mustRender is render.Render on a test's events, which never spend the
// filter budget.
func mustRender(t testing.TB, events []feed.Event, p *render.Policy, c render.Context) render.Result {
	t.Helper()
	res, err := render.Render(events, p, c)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
