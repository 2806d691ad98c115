package render_test

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/printable"
	"github.com/calsyncd/calsyncd/internal/render"
)

// units is the length of s in UTF-16 code units, as the caps count it.
func units(s string) int { return len(utf16.Encode([]rune(s))) }

// checkShown fails unless what ev shows keeps the invariants of text for
// Google: valid UTF-8, no control character (but line feeds and tabs in the
// description), no bidirectional embedding, override or isolate, and within
// the caps.
func checkShown(t *testing.T, ev feed.Event) {
	t.Helper()
	for _, f := range []struct {
		name, v string
		max     int
		lines   bool
	}{{"summary", ev.Summary, render.MaxSummary, false}, {"description", ev.Description, render.MaxDescription, true},
		{"location", ev.Location, render.MaxLocation, false}, {"url", ev.URL, render.MaxURL, false}} {
		if !utf8.ValidString(f.v) {
			t.Errorf("%s is not valid UTF-8: %q", f.name, f.v)
		}
		if n := units(f.v); n > f.max {
			t.Errorf("%s is %d UTF-16 code units, over its cap %d", f.name, n, f.max)
		}
		for _, r := range f.v {
			if printable.Control(r) && !(f.lines && (r == '\n' || r == '\t')) || printable.BidiControl(r) || r == 0x2028 || r == 0x2029 {
				t.Errorf("%s holds %U: %q", f.name, r, f.v)
			}
		}
	}
	if ev.Hash != ev.ComputeHash() {
		t.Errorf("the hash does not follow what is shown")
	}
}

// TestTitleTemplateIsBounded: a template repeating {summary} 10,000 times
// on 1 KB summaries gives a title within MaxSummary, cut at a character and
// ending in "…", and the expansion never builds the 10 MB title it
// describes: one Render costs a bounded number of bytes.
func TestTitleTemplateIsBounded(t *testing.T) {
	template := strings.Repeat("{summary} ", 10000)
	title, err := render.ParseTitle(template)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, summary string
	}{
		{"ascii", strings.Repeat("a", 1024)},
		{"two-byte", strings.Repeat("é", 512)},
		{"three-byte", strings.Repeat("€", 341)},
		{"emoji", strings.Repeat("🎂", 256)}, // each two code units: the cap falls inside none
		{"mixed", strings.Repeat("x🎂é ", 100)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := []feed.Event{event("a", tc.summary)}
			p := &render.Policy{Title: title}
			got := mustRender(t, evs, p, render.Context{}).Events[0]
			checkShown(t, got)
			if n := units(got.Summary); n < render.MaxSummary-8 {
				t.Errorf("title is %d code units, want it filled to about %d", n, render.MaxSummary)
			}
			if !strings.HasSuffix(got.Summary, render.Ellipsis) {
				t.Errorf("the cut title does not end in %q: ...%q", render.Ellipsis, got.Summary[len(got.Summary)-16:])
			}
			body := strings.TrimSuffix(got.Summary, render.Ellipsis)
			if full := strings.Repeat(tc.summary+" ", 10000); !strings.HasPrefix(full, body) {
				t.Errorf("the title is not a prefix of the expansion")
			}
			const runs = 20
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for range runs {
				mustRender(t, evs, p, render.Context{})
			}
			runtime.ReadMemStats(&after)
			per := (after.TotalAlloc - before.TotalAlloc) / runs
			t.Logf("one Render: %d bytes allocated, title %d code units (%d bytes)", per, units(got.Summary), len(got.Summary))
			if per > 64<<10 {
				t.Errorf("one Render allocated %d bytes, want at most 64 KiB (the full expansion is %d)", per, 10000*(len(tc.summary)+1))
			}
		})
	}
}

// TestControlCharactersNeverReachGoogle: ESC, BEL, NUL, DEL, C1 controls
// and the bidirectional overrides and isolates, from the feed or from a
// title template or the calendar's name, are left out of what Google shows;
// line breaks in a one-line field become spaces, the description keeps
// its line feeds and tabs (CRLF and CR become line feeds).
func TestControlCharactersNeverReachGoogle(t *testing.T) {
	for _, tc := range []struct {
		name               string
		template, calName  string
		summary, desc, loc string
		wantSum, wantDesc  string
		wantLoc            string
		url, wantURL       string
	}{
		{name: "feed ESC and BEL", summary: "\x1b[31mRed\x1b[0m alert\x07", wantSum: "[31mRed[0m alert",
			desc: "line 1\r\n\x1b]0;pwned\x07line 2\ttab", wantDesc: "line 1\n]0;pwnedline 2\ttab",
			loc: "Room\x1b 4", wantLoc: "Room 4"},
		{name: "feed bidi override", summary: "invoice\u202egnp.exe", wantSum: "invoicegnp.exe",
			desc: "\u2066isolated\u2069 \u202aembedded\u202c", wantDesc: "isolated embedded", loc: "\u202dx\u202e", wantLoc: "x"},
		{name: "C0, DEL and C1", summary: "a\x00b\x7fc\u009bd\u0085e", wantSum: "abcd e",
			desc: "p\u2028q\u2029r\rs", wantDesc: "p\nq\nr\ns"},
		{name: "line breaks in one-line fields", summary: "two\nlines\r\nhere\tand", wantSum: "two lines here and",
			loc: "a\u2028b", wantLoc: "a b"},
		{name: "bidi marks and text stay", summary: "שלום\u200f (x)", wantSum: "שלום\u200f (x)",
			desc: "Geburtstag – Jürgen 🎂\n", wantDesc: "Geburtstag – Jürgen 🎂\n"},
		{name: "invalid UTF-8", summary: "a\xffb\xc3", wantSum: "ab"},
		{name: "template ESC", template: "\x1b[2J[Team\u202e] {summary}\x07", summary: "Planning", wantSum: "[2J[Team] Planning"},
		{name: "calendar name BEL", template: "{calendar_name}: {summary}", calName: "Ops\x07\u2067", summary: "x\x1b", wantSum: "Ops: x"},
		{name: "template trims what the stripping leaves", template: "\x07 {summary} \x1b", summary: "\u202e x ", wantSum: "x"},
		{name: "url with a control is dropped", summary: "x", wantSum: "x", url: "https://x.example/a\u202eb", wantURL: ""},
		{name: "plain url stays", summary: "x", wantSum: "x", url: "https://x.example/a?b=c", wantURL: "https://x.example/a?b=c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := event("a", tc.summary, func(ev *feed.Event) { ev.Description, ev.Location, ev.URL = tc.desc, tc.loc, tc.url })
			policies := []*render.Policy{nil, {ColorID: "3"}}
			if tc.template != "" {
				title, err := render.ParseTitle(tc.template)
				if err != nil {
					t.Fatal(err)
				}
				policies = []*render.Policy{{Title: title}}
			}
			for _, p := range policies {
				evs := []feed.Event{ev}
				got := mustRender(t, evs, p, render.Context{CalendarName: tc.calName}).Events[0]
				checkShown(t, got)
				if got.Summary != tc.wantSum || got.Description != tc.wantDesc || got.Location != tc.wantLoc || got.URL != tc.wantURL {
					t.Errorf("policy %+v shows %q / %q / %q / %q, want %q / %q / %q / %q", p, got.Summary, got.Description, got.Location, got.URL,
						tc.wantSum, tc.wantDesc, tc.wantLoc, tc.wantURL)
				}
				if evs[0].Summary != tc.summary || evs[0].Hash != ev.Hash {
					t.Errorf("the caller's event was changed")
				}
			}
		})
	}
}

// TestFeedTextIsCapped: each field Google shows is held to its cap, cut at
// a character and ending in "…"; text exactly at the cap is left whole;
// a link beyond its cap is dropped, never cut.
func TestFeedTextIsCapped(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(ev *feed.Event, s string)
		get  func(ev feed.Event) string
		max  int
		unit string // repeated to build the text
	}{
		{name: "summary", set: func(ev *feed.Event, s string) { ev.Summary = s }, get: func(ev feed.Event) string { return ev.Summary }, max: render.MaxSummary, unit: "a"},
		{name: "summary emoji", set: func(ev *feed.Event, s string) { ev.Summary = s }, get: func(ev feed.Event) string { return ev.Summary }, max: render.MaxSummary, unit: "🎂"},
		{name: "description", set: func(ev *feed.Event, s string) { ev.Description = s }, get: func(ev feed.Event) string { return ev.Description }, max: render.MaxDescription, unit: "é"},
		{name: "description emoji", set: func(ev *feed.Event, s string) { ev.Description = s }, get: func(ev feed.Event) string { return ev.Description }, max: render.MaxDescription, unit: "x🎂"},
		{name: "location", set: func(ev *feed.Event, s string) { ev.Location = s }, get: func(ev feed.Event) string { return ev.Location }, max: render.MaxLocation, unit: "€"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := units(tc.unit)
			for _, n := range []int{tc.max / u, tc.max/u + 1, 20 * tc.max} {
				s := strings.Repeat(tc.unit, n)
				ev := event("a", "x", func(ev *feed.Event) { tc.set(ev, s) })
				for _, p := range []*render.Policy{nil, {ColorID: "1"}} {
					got := mustRender(t, []feed.Event{ev}, p, render.Context{}).Events[0]
					checkShown(t, got)
					v := tc.get(got)
					if units(s) <= tc.max {
						if v != s {
							t.Errorf("%d code units (within the cap) became %d", units(s), units(v))
						}
						continue
					}
					if !strings.HasSuffix(v, render.Ellipsis) || !strings.HasPrefix(s, strings.TrimSuffix(v, render.Ellipsis)) {
						t.Errorf("%d code units: not a prefix ending in %q", units(s), render.Ellipsis)
					}
					if units(v) < tc.max-u {
						t.Errorf("%d code units cut to %d, want about %d", units(s), units(v), tc.max)
					}
				}
			}
		})
	}
	long := "https://x.example/" + strings.Repeat("a", render.MaxURL)
	atCap := long[:render.MaxURL]
	for _, tc := range []struct{ url, want string }{{long, ""}, {atCap, atCap}} {
		ev := event("a", "x", func(ev *feed.Event) { ev.URL = tc.url })
		if got := mustRender(t, []feed.Event{ev}, nil, render.Context{}).Events[0].URL; got != tc.want {
			t.Errorf("a %d-byte link became %d bytes, want %d", len(tc.url), len(got), len(tc.want))
		}
	}
}

// TestCleanEventsAreLeftAlone: events that need no cleaning keep their
// text and hashes, and a policy that changes nothing returns the caller's
// events themselves; an event that needs it gets a new hash, its
// neighbours not.
func TestCleanEventsAreLeftAlone(t *testing.T) {
	evs := []feed.Event{event("a", "Standup", func(ev *feed.Event) { ev.Description = "Agenda:\n\t1. x\n" }), event("b", "Review 🎂")}
	if got := mustRender(t, evs, nil, render.Context{}).Events; &got[0] != &evs[0] {
		t.Errorf("clean events were copied")
	}
	dirty := append(slices.Clone(evs), event("c", "x\x1b"))
	got := mustRender(t, dirty, nil, render.Context{}).Events
	if got[0].Hash != evs[0].Hash || got[1].Hash != evs[1].Hash || got[2].Hash == dirty[2].Hash || got[2].Summary != "x" {
		t.Errorf("hashes %v, summary %q", []bool{got[0].Hash == evs[0].Hash, got[1].Hash == evs[1].Hash, got[2].Hash != dirty[2].Hash}, got[2].Summary)
	}
	if dirty[2].Summary != "x\x1b" {
		t.Errorf("the caller's event was changed")
	}
	again := mustRender(t, got, nil, render.Context{}).Events
	if &again[0] != &got[0] {
		t.Errorf("rendering what was rendered changed it again")
	}
}
