package gcalwriter_test

import (
	"strconv"
	"testing"
	"testing/synctest"

	calendar "google.golang.org/api/calendar/v3"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

func styled(ev *feed.Event, st *feed.Style) *feed.Event {
	out := *ev
	out.Style = st
	out.Hash = out.ComputeHash()
	return &out
}

func googleEvent(t *testing.T, h *harness, id string) *calendar.Event {
	t.Helper()
	for _, ev := range h.fake.Events(cal) {
		if ev.Id == id {
			return ev
		}
	}
	t.Fatalf("event %s is not in the calendar", id)
	return nil
}

// TestSubscriptionStyleReachesGoogle: a subscription's colour and
// reminders are written, "none" as useDefault false with no overrides.
func TestSubscriptionStyleReachesGoogle(t *testing.T) {
	synctest.Test(t, testSubscriptionStyleReachesGoogle)
}

func testSubscriptionStyleReachesGoogle(t *testing.T) {
	h := newHarness(t, gcalfake.Options{})
	w := h.writer("alice", gcalwriter.Options{})
	mem := newMem()
	ev := styled(event("a@example.com", "Planning"), &feed.Style{ColorID: "5",
		Reminders: &feed.Reminders{Overrides: []feed.Reminder{{Method: "popup", Minutes: 0}, {Method: "email", Minutes: 1440}}}})
	none := styled(event("b@example.com", "Holiday"), &feed.Style{Reminders: &feed.Reminders{}})
	apply(t, w, mem, create(ev), create(none))
	g := googleEvent(t, h, mem.mapping(ev.Key()).EventID)
	if g.ColorId != "5" || g.Reminders == nil || g.Reminders.UseDefault || len(g.Reminders.Overrides) != 2 ||
		g.Reminders.Overrides[0].Method != "popup" || g.Reminders.Overrides[0].Minutes != 0 || g.Reminders.Overrides[1].Minutes != 1440 {
		t.Errorf("styled event in Google: colour %q reminders %+v", g.ColorId, g.Reminders)
	}
	if n := googleEvent(t, h, mem.mapping(none.Key()).EventID); n.Reminders == nil || n.Reminders.UseDefault || len(n.Reminders.Overrides) != 0 {
		t.Errorf("reminders: none in Google: %+v", n.Reminders)
	}
}

// TestPersonalStyleKeptUnlessTheSubscriptionSetsIt: a person's own colour
// and reminders survive a feed update (the 412 path reads them back) when
// the subscription sets neither; when it sets them, ours win.
func TestPersonalStyleKeptUnlessTheSubscriptionSetsIt(t *testing.T) {
	theirs := &calendar.EventReminders{Overrides: []*calendar.EventReminder{{Method: "popup", Minutes: 3}}}
	for _, tc := range []struct {
		name      string
		style     *feed.Style
		wantColor string
		wantRem   string
	}{
		{"the subscription sets neither", nil, "11", "popup:3"},
		{"the subscription sets both", &feed.Style{ColorID: "5", Reminders: &feed.Reminders{UseDefault: true}}, "5", "default"},
		{"the subscription sets the colour only", &feed.Style{ColorID: "5"}, "5", "popup:3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, gcalfake.Options{})
				w := h.writer("alice", gcalwriter.Options{})
				mem := newMem()
				ev := styled(event("a@example.com", "Planning"), tc.style)
				apply(t, w, mem, create(ev))
				m := mem.mapping(ev.Key())
				h.fake.Edit(cal, m.EventID, func(e *calendar.Event) { e.ColorId, e.Reminders = "11", theirs })
				changed := *ev
				changed.Summary = "Planning (moved)"
				changed.Hash = changed.ComputeHash()
				res := apply(t, w, mem, update(&changed, m))
				if res.Updated != 1 {
					t.Fatalf("update: %+v", res)
				}
				g := googleEvent(t, h, m.EventID)
				rem := "<none>"
				if r := g.Reminders; r != nil {
					rem = ""
					if r.UseDefault {
						rem = "default"
					}
					for _, o := range r.Overrides {
						rem += o.Method + ":" + strconv.FormatInt(o.Minutes, 10)
					}
				}
				if g.Summary != "Planning (moved)" || g.ColorId != tc.wantColor || rem != tc.wantRem {
					t.Errorf("after the update: %q colour %q reminders %s; want colour %s reminders %s", g.Summary, g.ColorId, rem, tc.wantColor, tc.wantRem)
				}
			})
		})
	}
}
