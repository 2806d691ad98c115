package feed_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
)

func TestParseTeamFeed(t *testing.T) {
	f, err := os.Open("../../testdata/feeds/team.ics")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cal, err := feed.Parse(f, feed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cal.Name != "Platform team" || cal.TimeZone != "Europe/Berlin" || len(cal.Events) != 9 || len(cal.Warnings) != 0 {
		t.Fatalf("calendar = %q %q, %d events, warnings %v", cal.Name, cal.TimeZone, len(cal.Events), cal.Warnings)
	}
	byUID := map[string]feed.Event{}
	for _, ev := range cal.Events {
		byUID[ev.UID] = ev
		if ev.Hash == "" || ev.Hash != ev.ComputeHash() {
			t.Errorf("%s: hash %q not computed", ev.UID, ev.Hash)
		}
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	p := byUID["planning-2027-01@example.com"]
	if !p.Start.T.Equal(time.Date(2027, 1, 11, 10, 0, 0, 0, berlin)) || p.Start.Zone != "Europe/Berlin" ||
		p.Location != "Room 4.12, Building B" || p.Description != "Agenda:\n1. Roadmap\n2. Hiring; budget" {
		t.Errorf("planning = %+v", p)
	}
	h := byUID["holiday-2027-01-06@example.com"]
	if !h.Start.AllDay || h.Start.Date() != "2027-01-06" || h.End.Date() != "2027-01-07" || h.Transparency != feed.TransparencyTransparent {
		t.Errorf("all-day without DTEND = %+v", h)
	}
	r := byUID["retro-2027-01@example.com"]
	if r.End.T.Sub(r.Start.T) != time.Hour {
		t.Errorf("DURATION:PT1H gave %v", r.End.T.Sub(r.Start.T))
	}
	if v := byUID["oncall-handover-2027-02@example.com"].Visibility; v != feed.VisibilityPrivate {
		t.Errorf("CLASS:PRIVATE gave visibility %q", v)
	}
	// The weekly team sync: a series, a moved and a cancelled instance.
	var sync []string
	for _, ev := range cal.Events {
		if ev.UID == "team-sync-2026@example.com" {
			sync = append(sync, fmt.Sprintf("%s %s %s %v", ev.RecurrenceID, ev.Start.T.UTC().Format(time.RFC3339), ev.Status, ev.Recurrence))
		}
	}
	want := []string{
		" 2026-12-07T08:30:00Z confirmed [RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=26]",
		"20261221T083000Z 2026-12-22T13:00:00Z confirmed []",
		"20261228T083000Z 2026-12-28T08:30:00Z cancelled []",
	}
	if fmt.Sprint(sync) != fmt.Sprint(want) {
		t.Errorf("team sync = %q, want %q", sync, want)
	}
}

func TestParseRefusesWhatIsNotACalendar(t *testing.T) {
	for name, body := range map[string]string{
		"empty":      "",
		"whitespace": "  \r\n",
		"html":       "<!DOCTYPE html><html><head><title>Sign in</title></head><body>login</body></html>",
		"json":       `{"error":"unauthorized"}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := feed.Parse(strings.NewReader(body), feed.Options{})
			if !errors.Is(err, feed.ErrNotCalendar) {
				t.Fatalf("err = %v, want ErrNotCalendar", err)
			}
			if name == "html" && !strings.Contains(err.Error(), "HTML page") {
				t.Errorf("HTML error does not say so: %v", err)
			}
		})
	}
}

func TestHashIgnoresDTSTAMP(t *testing.T) {
	body, err := os.ReadFile("../../testdata/feeds/team.ics")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := feed.Parse(strings.NewReader(string(body)), feed.Options{})
	b, _ := feed.Parse(strings.NewReader(strings.ReplaceAll(string(body), "DTSTAMP:20261120T090000Z", "DTSTAMP:20261201T000000Z")), feed.Options{})
	for i := range a.Events {
		if a.Events[i].Hash != b.Events[i].Hash {
			t.Errorf("%s: hash changed with DTSTAMP", a.Events[i].UID)
		}
	}
	c, _ := feed.Parse(strings.NewReader(strings.Replace(string(body), "SUMMARY:Team offsite", "SUMMARY:Team offsite (cancelled?)", 1)), feed.Options{})
	changed := 0
	for i := range a.Events {
		if a.Events[i].Hash != c.Events[i].Hash {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("changing one summary changed %d hashes, want 1", changed)
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in    string
		days  int
		exact time.Duration
		bad   bool
	}{
		{in: "PT1H", exact: time.Hour},
		{in: "PT1H30M", exact: 90 * time.Minute},
		{in: "P1D", days: 1},
		{in: "P1W", days: 7},
		{in: "P1DT12H", days: 1, exact: 12 * time.Hour},
		{in: "-PT15M", exact: -15 * time.Minute},
		{in: "PT0S"},
		{in: "P", bad: true},
		{in: "PT", bad: true},
		{in: "1H", bad: true},
		{in: "PT1D", bad: true},
		{in: "P1H", bad: true},
		{in: "PTH", bad: true},
		{in: "P99999999D", bad: true},
	}
	for _, tt := range tests {
		d, err := feed.ParseDuration(tt.in)
		if (err != nil) != tt.bad {
			t.Errorf("ParseDuration(%q) err = %v, want bad=%v", tt.in, err, tt.bad)
			continue
		}
		if !tt.bad && (d.Days != tt.days || d.Exact != tt.exact) {
			t.Errorf("ParseDuration(%q) = %+v", tt.in, d)
		}
	}
}
