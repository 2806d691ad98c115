package feed_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
)

func calendarOf(events ...string) []byte {
	return []byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\n" + strings.Join(events, "") + "END:VCALENDAR\r\n")
}

// TestDetailsForRender: the parser carries what the render stage reads
// and Google does not show: categories (every CATEGORIES line, split at
// commas), a CLASS beyond the three Google knows, and the VALARMs with a
// relative trigger; an absolute trigger is counted, never guessed.
func TestDetailsForRender(t *testing.T) {
	body := calendarOf(`BEGIN:VEVENT
UID:a
DTSTART:20270111T100000Z
DTEND:20270111T110000Z
SUMMARY:Planning
CATEGORIES:Work, Planning
categories:Quarterly
CLASS:X-SECRET
BEGIN:VALARM
ACTION:DISPLAY
TRIGGER:-PT15M
DESCRIPTION:dropped
END:VALARM
BEGIN:VALARM
ACTION:EMAIL
TRIGGER;RELATED=END:-PT2H
END:VALARM
BEGIN:VALARM
ACTION:AUDIO
TRIGGER;VALUE=DATE-TIME:20270110T090000Z
END:VALARM
BEGIN:VALARM
ACTION:DISPLAY
TRIGGER:PT5M
END:VALARM
END:VEVENT
`, `BEGIN:VEVENT
UID:b
DTSTART;VALUE=DATE:20270112
SUMMARY:Holiday
CLASS:PRIVATE
END:VEVENT
`)
	cal, err := feed.ParseBytes(body, feed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Events) != 2 || len(cal.Warnings) != 0 {
		t.Fatalf("events %d warnings %v", len(cal.Events), cal.Warnings)
	}
	a, b := cal.Events[0], cal.Events[1]
	d := a.Details
	if d == nil {
		t.Fatal("event a has no details")
	}
	if !slices.Equal(d.Categories, []string{"Work", "Planning", "Quarterly"}) || d.Class != "X-SECRET" || d.AbsoluteAlarms != 1 {
		t.Errorf("details = %+v", d)
	}
	want := []feed.Alarm{{Action: "DISPLAY", Before: 15 * time.Minute}, {Action: "EMAIL", Before: time.Hour},
		{Action: "DISPLAY", Before: -5 * time.Minute}}
	if !slices.Equal(d.Alarms, want) {
		t.Errorf("alarms = %+v, want %+v", d.Alarms, want)
	}
	if b.Details != nil || b.Visibility != feed.VisibilityPrivate {
		t.Errorf("event b: details %+v visibility %s, want none and private", b.Details, b.Visibility)
	}
}

// TestDetailsLeaveTheHashAlone: categories, CLASS and alarms are not shown
// by Google, so adding them to a feed changes no hash.
func TestDetailsLeaveTheHashAlone(t *testing.T) {
	plain := calendarOf("BEGIN:VEVENT\r\nUID:a\r\nDTSTART:20270111T100000Z\r\nSUMMARY:x\r\nEND:VEVENT\r\n")
	rich := calendarOf("BEGIN:VEVENT\r\nUID:a\r\nDTSTART:20270111T100000Z\r\nSUMMARY:x\r\nCATEGORIES:Work\r\n" +
		"BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT10M\r\nEND:VALARM\r\nEND:VEVENT\r\n")
	p, err1 := feed.ParseBytes(plain, feed.Options{})
	r, err2 := feed.ParseBytes(rich, feed.Options{})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if p.Events[0].Hash != r.Events[0].Hash {
		t.Errorf("details changed the hash: %s vs %s", p.Events[0].Hash, r.Events[0].Hash)
	}
}

// TestOddDetailsNeverCostTheEvent: a CATEGORIES or TRIGGER line golang-ical
// could not read, or a component inside a VALARM, drops that line, never
// the event.
func TestOddDetailsNeverCostTheEvent(t *testing.T) {
	body := calendarOf("BEGIN:VEVENT\r\nUID:a\r\nDTSTART:20270111T100000Z\r\nSUMMARY:x\r\n" +
		"CATEGORIES;X-Q=\"unterminated:Work\r\n" +
		"BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER;RELATED=\"x:-PT5M\r\nBEGIN:X-NESTED\r\nFOO:bar\r\nEND:X-NESTED\r\nEND:VALARM\r\n" +
		"BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:not-a-duration\r\nEND:VALARM\r\nEND:VEVENT\r\n")
	cal, err := feed.ParseBytes(body, feed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Events) != 1 {
		t.Fatalf("events = %d, warnings %v", len(cal.Events), cal.Warnings)
	}
	if d := cal.Events[0].Details; d != nil {
		t.Errorf("details = %+v, want none", d)
	}
}

// TestStyleChangesTheHash: a colour or reminders set by a subscription
// change the hash (so the plan rewrites the event); reminders left alone
// (nil) and "no reminders" differ.
func TestStyleChangesTheHash(t *testing.T) {
	base := feed.Event{UID: "a", Summary: "x", Start: feed.Time{T: time.Unix(1e9, 0).UTC()}, End: feed.Time{T: time.Unix(1e9+3600, 0).UTC()}}
	hashes := map[string]string{}
	for name, style := range map[string]*feed.Style{
		"none":         nil,
		"empty":        {},
		"color 5":      {ColorID: "5"},
		"color 6":      {ColorID: "6"},
		"no reminders": {Reminders: &feed.Reminders{}},
		"default":      {Reminders: &feed.Reminders{UseDefault: true}},
		"popup 10":     {Reminders: &feed.Reminders{Overrides: []feed.Reminder{{Method: "popup", Minutes: 10}}}},
		"email 10":     {Reminders: &feed.Reminders{Overrides: []feed.Reminder{{Method: "email", Minutes: 10}}}},
	} {
		ev := base
		ev.Style = style
		hashes[name] = ev.ComputeHash()
	}
	if hashes["none"] != hashes["empty"] {
		t.Errorf("an empty style changed the hash")
	}
	seen := map[string]string{}
	for name, h := range hashes {
		if name == "empty" {
			continue
		}
		if other, dup := seen[h]; dup {
			t.Errorf("%s and %s hash alike", name, other)
		}
		seen[h] = name
	}
}

func TestChangedFields(t *testing.T) {
	ev := feed.Event{UID: "a", Summary: "x", Start: feed.Time{T: time.Unix(1e9, 0).UTC()}, End: feed.Time{T: time.Unix(1e9+3600, 0).UTC()}}
	before := ev.Shown().Digest()
	ev.Summary, ev.Style = "y", &feed.Style{ColorID: "3"}
	after := ev.Shown().Digest()
	if got := fmt.Sprint(feed.ChangedFields(before, after)); got != "[summary color]" {
		t.Errorf("changed = %s", got)
	}
	if feed.ChangedFields("", after) != nil || feed.ChangedFields(after, after) != nil {
		t.Errorf("unknown or equal digests name fields")
	}
}
