package subscription_test

import (
	"strings"
	"testing"
	"unicode/utf16"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/render"
)

// TestGoogleIsShownCappedCleanText: whether a subscription has a render
// policy or none, the feed's control characters (ESC, BEL, U+202E) never
// reach Google, a 20,000-character description arrives within
// render.MaxDescription, and a title template repeating {summary} on a
// 1 KB summary arrives within render.MaxSummary; the next sync of the
// unchanged feed writes nothing.
func TestGoogleIsShownCappedCleanText(t *testing.T) {
	feed := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\n" +
		"BEGIN:VEVENT\r\nUID:a@x\r\nDTSTART:20261207T090000Z\r\nDTEND:20261207T100000Z\r\n" +
		"SUMMARY:\x1b[31mAlert\x07 invoice\u202egnp.exe\r\n" +
		"DESCRIPTION:" + strings.Repeat("d", 20000) + "\r\n" +
		"LOCATION:Room\x1b 4\r\nEND:VEVENT\r\n" +
		"BEGIN:VEVENT\r\nUID:b@x\r\nDTSTART:20261208T090000Z\r\nDTEND:20261208T100000Z\r\n" +
		"SUMMARY:" + strings.Repeat("s", 1024) + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	for _, tc := range []struct {
		name  string
		title *string
		want  map[string]string // uid → summary prefix
	}{
		{"no policy", nil, map[string]string{"a@x": "[31mAlert invoicegnp.exe", "b@x": strings.Repeat("s", 1024)}},
		{"title template", ptr(strings.Repeat("{summary} ", 300)), map[string]string{"a@x": "[31mAlert invoicegnp.exe [31mAlert", "b@x": "sss"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newRenderHarness(t, "")
			h.setFeed([]byte(feed))
			h.cfg.Subscriptions[0].Title = tc.title
			if rep := h.sync(); rep.Run.Outcome != calsyncd.OutcomeOK || rep.Run.Created != 2 {
				t.Fatalf("sync: %s, created %d (%v)", rep.Run.Outcome, rep.Run.Created, rep.Err)
			}
			evs := h.fake.Events(testCalendar)
			if len(evs) != 2 {
				t.Fatalf("Google has %d events", len(evs))
			}
			for _, ev := range evs {
				text := ev.Summary + ev.Description + ev.Location
				if strings.ContainsAny(text, "\x1b\x07\u202e") {
					t.Errorf("Google shows a control character: %.80q", text)
				}
				if n := len(utf16.Encode([]rune(ev.Summary))); n > render.MaxSummary {
					t.Errorf("summary of %d code units", n)
				}
				if n := len(utf16.Encode([]rune(ev.Description))); n > render.MaxDescription {
					t.Errorf("description of %d code units", n)
				}
				if ev.Location != "" && ev.Location != "Room 4" {
					t.Errorf("location %q, want Room 4", ev.Location)
				}
				if ev.Source != nil && ev.Source.Title != ev.Summary {
					t.Errorf("the link's title %q is not the summary", ev.Source.Title)
				}
				uid := ev.ExtendedProperties.Private["calsyncd_uid"]
				if !strings.HasPrefix(ev.Summary, tc.want[uid]) {
					t.Errorf("%s shows %.60q, want it to start %.60q", uid, ev.Summary, tc.want[uid])
				}
			}
			before := totalWrites(h.writes())
			if h.sync(); totalWrites(h.writes()) != before {
				t.Errorf("the second sync wrote %d times", totalWrites(h.writes())-before)
			}
		})
	}
}
