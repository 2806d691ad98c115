package subscription_test

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/teambition/rrule-go"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// This file is the test's own reading of a parsed feed: what RFC 5545 says
// a person should see, expanded with rrule-go straight from the events the
// feed package parsed. It shares no code with the path under test (diff's
// shaping, the writer, the emulator's expansion), so that the two can be
// compared.

// sighting is one occurrence a person sees.
type sighting struct {
	summary    string
	start, end time.Time
	allDay     bool
}

// String renders it as gcalfake.Occurrence does.
func (s sighting) String() string {
	if s.allDay {
		return s.start.Format("2006-01-02") + ".." + s.end.Format("2006-01-02") + " " + strconv.Quote(s.summary)
	}
	return s.start.UTC().Format(time.RFC3339) + ".." + s.end.UTC().Format(time.RFC3339) + " " + strconv.Quote(s.summary)
}

func sightingOf(ev *feed.Event, start, end time.Time) sighting {
	return sighting{summary: shownTitle(ev.Summary), start: start, end: end, allDay: ev.Start.AllDay}
}

// shownTitle is a summary as a person sees it in Google: on one line (a
// line break or a tab is a space) and without control characters or
// bidirectional overrides and isolates.
func shownTitle(s string) string {
	s = strings.ReplaceAll(s, "\r\n", " ")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n', r == '\r', r == '\t', r == 0x85, r == 0x2028, r == 0x2029:
			return ' '
		case r < 0x20, r >= 0x7f && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return -1
		}
		return r
	}, s)
}

// expected lists what a person should see of events in [lo, hi).
func expected(t *testing.T, events []feed.Event, lo, hi time.Time) []string {
	t.Helper()
	type group struct {
		master    *feed.Event
		overrides []*feed.Event
	}
	groups := map[string]*group{}
	var order []string
	for i := range events {
		ev := &events[i]
		g := groups[ev.UID]
		if g == nil {
			g = &group{}
			groups[ev.UID] = g
			order = append(order, ev.UID)
		}
		if ev.RecurrenceID == "" {
			g.master = ev
		} else {
			g.overrides = append(g.overrides, ev)
		}
	}
	var all []sighting
	add := func(ev *feed.Event) {
		if ev.Status != feed.StatusCancelled {
			all = append(all, sightingOf(ev, ev.Start.T, ev.End.T))
		}
	}
	for _, uid := range order {
		g := groups[uid]
		m := g.master
		switch {
		case m == nil:
			for _, ov := range g.overrides {
				add(ov)
			}
		case !m.IsRecurring() || m.Status == feed.StatusCancelled:
			replaced := false
			for _, ov := range g.overrides {
				if !m.IsRecurring() && ov.RecurrenceID == ridOf(m, m.Start.T) {
					replaced = true
				}
				add(ov)
			}
			if !replaced {
				add(m)
			}
		default:
			all = append(all, expandSeries(t, m, g.overrides, hi)...)
		}
	}
	var out []string
	slices.SortFunc(all, func(a, b sighting) int {
		return cmp.Or(a.start.Compare(b.start), a.end.Compare(b.end), strings.Compare(a.summary, b.summary))
	})
	for _, s := range all {
		if s.start.Before(hi) && (s.end.After(lo) || (s.end.Equal(s.start) && !s.start.Before(lo))) {
			out = append(out, s.String())
		}
	}
	return out
}

// wallClockOf puts an occurrence o, computed in loc, at DTSTART's time of
// day on its date as RFC 5545 §3.3.5 reads a time in a daylight-saving gap:
// with the UTC offset before the gap (rrule-go, like Go's time.Date, takes
// the offset after it, an hour early).
func wallClockOf(o, dtstart time.Time, loc *time.Location) time.Time {
	y, m, d := o.Date()
	h, mi, sec := dtstart.Clock()
	t := time.Date(y, m, d, h, mi, sec, 0, loc)
	if th, tm, ts := t.Clock(); th == h && tm == mi && ts == sec {
		return o
	}
	_, before := time.Date(y, m, d, 0, 0, 0, 0, loc).Zone()
	return time.Date(y, m, d, h, mi, sec, 0, time.UTC).Add(-time.Duration(before) * time.Second).In(loc)
}

// ridOf renders an original start as the feed keys it.
func ridOf(m *feed.Event, t time.Time) string {
	if m.Start.AllDay {
		return t.Format("20060102")
	}
	return t.UTC().Format("20060102T150405Z")
}

// expandSeries applies RFC 5545 to one series: DTSTART is the first
// occurrence and counts towards COUNT, RDATEs add, EXDATEs remove, an
// override replaces the occurrence its RECURRENCE-ID names (or stands
// alone when it names none), and a RANGE=THISANDFUTURE override moves and
// changes every occurrence from its own on.
func expandSeries(t *testing.T, m *feed.Event, overrides []*feed.Event, hi time.Time) []sighting {
	loc := m.Start.T.Location()
	if m.Start.AllDay {
		loc = time.UTC
	}
	dtstart := m.Start.T.In(loc)
	horizon := hi.AddDate(2, 0, 0)
	occ := map[int64]time.Time{dtstart.UnixNano(): dtstart}
	var ex []time.Time
	for _, line := range m.Recurrence {
		name, rest, _ := strings.Cut(line, ":")
		params := ""
		if n, p, ok := strings.Cut(name, ";"); ok {
			name, params = n, p+":"
		}
		switch name {
		case "RRULE":
			opt, err := rrule.StrToROptionInLocation(rest, loc)
			if err != nil {
				t.Fatalf("%s: %s: %v", m.UID, line, err)
			}
			opt.Dtstart = dtstart
			r, err := rrule.NewRRule(*opt)
			if err != nil {
				t.Fatalf("%s: %s: %v", m.UID, line, err)
			}
			ts := r.Between(dtstart, horizon, true)
			if !strings.Contains(rest, "BYHOUR") && !strings.Contains(rest, "BYMINUTE") && !strings.Contains(rest, "BYSECOND") {
				for i, o := range ts {
					ts[i] = wallClockOf(o, dtstart, loc)
				}
			}
			if opt.Count > 0 && len(ts) > 0 && !ts[0].Equal(dtstart) && len(ts) >= opt.Count {
				ts = ts[:opt.Count-1] // DTSTART took the first place
			}
			for _, o := range ts {
				occ[o.UnixNano()] = o
			}
		case "RDATE", "EXDATE":
			ts, err := rrule.StrToDatesInLoc(params+rest, loc)
			if err != nil {
				t.Fatalf("%s: %s: %v", m.UID, line, err)
			}
			if name == "RDATE" {
				for _, o := range ts {
					occ[o.UnixNano()] = o
				}
			} else {
				ex = append(ex, ts...)
			}
		}
	}
	for _, x := range ex {
		delete(occ, x.UnixNano())
	}
	plain := map[string]*feed.Event{}
	var ranges []*feed.Event
	for _, ov := range overrides {
		if ov.ThisAndFuture {
			ranges = append(ranges, ov)
		} else {
			plain[ov.RecurrenceID] = ov
		}
	}
	origOf := func(ov *feed.Event) (time.Time, bool) {
		for _, o := range occ {
			if ridOf(m, o) == ov.RecurrenceID {
				return o, true
			}
		}
		return time.Time{}, false
	}
	type span struct {
		from time.Time
		ov   *feed.Event
	}
	var spans []span
	for _, ov := range ranges {
		if o, ok := origOf(ov); ok {
			spans = append(spans, span{o, ov})
		} else {
			plain[ov.RecurrenceID] = ov
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from.Compare(b.from) })
	var out []sighting
	used := map[string]bool{}
	for _, o := range occ {
		rid := ridOf(m, o)
		if ov := plain[rid]; ov != nil {
			used[rid] = true
			if ov.Status != feed.StatusCancelled {
				out = append(out, sightingOf(ov, ov.Start.T, ov.End.T))
			}
			continue
		}
		var rng *span
		for i := range spans {
			if !o.Before(spans[i].from) {
				rng = &spans[i]
			}
		}
		if rng == nil {
			if m.Start.AllDay {
				days := int(m.End.T.Sub(m.Start.T).Hours()+12) / 24
				out = append(out, sightingOf(m, o, o.AddDate(0, 0, days)))
			} else {
				out = append(out, sightingOf(m, o, o.Add(m.End.T.Sub(m.Start.T))))
			}
			continue
		}
		ov := rng.ov
		if ov.Status == feed.StatusCancelled {
			continue
		}
		// Move by the override's wall-clock shift in the series' zone.
		a, b := rng.from.In(loc), ov.Start.T.In(loc)
		days := int(time.Date(b.Year(), b.Month(), b.Day(), 0, 0, 0, 0, time.UTC).Sub(time.Date(a.Year(), a.Month(), a.Day(), 0, 0, 0, 0, time.UTC)).Hours()+12) / 24
		secs := (b.Hour()-a.Hour())*3600 + (b.Minute()-a.Minute())*60 + (b.Second() - a.Second())
		w := o.In(loc)
		start := time.Date(w.Year(), w.Month(), w.Day()+days, w.Hour(), w.Minute(), w.Second()+secs, 0, loc)
		out = append(out, sightingOf(ov, start, start.Add(ov.End.T.Sub(ov.Start.T))))
	}
	for rid, ov := range plain {
		if !used[rid] && ov.Status != feed.StatusCancelled {
			out = append(out, sightingOf(ov, ov.Start.T, ov.End.T))
		}
	}
	return out
}

// shownBy lists what the emulator shows a person in [lo, hi).
func shownBy(fake *gcalfake.Server, lo, hi time.Time) []string {
	var out []string
	for _, o := range fake.Agenda(testCalendar, lo, hi) {
		out = append(out, o.String())
	}
	return out
}

// sameSightings compares two sorted lists and reports the differences.
func sameSightings(t *testing.T, what string, want, got []string) {
	t.Helper()
	if slices.Equal(want, got) {
		return
	}
	missing, extra := diffLists(want, got)
	t.Errorf("%s: Google shows %d occurrences, the feed means %d\nmissing from Google (%d):\n  %s\nextra in Google (%d):\n  %s",
		what, len(got), len(want), len(missing), strings.Join(head(missing, 12), "\n  "), len(extra), strings.Join(head(extra, 12), "\n  "))
}

func diffLists(want, got []string) (missing, extra []string) {
	count := map[string]int{}
	for _, s := range got {
		count[s]++
	}
	for _, s := range want {
		if count[s] > 0 {
			count[s]--
			continue
		}
		missing = append(missing, s)
	}
	for _, s := range got {
		count[s] = 0
	}
	for _, s := range want {
		count[s]++
	}
	for _, s := range got {
		if count[s] > 0 {
			count[s]--
			continue
		}
		extra = append(extra, s)
	}
	return missing, extra
}

func head(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("... and %d more", len(s)-n))
}
