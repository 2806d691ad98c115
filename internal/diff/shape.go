package diff

import (
	"fmt"
	"slices"
	"strings"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// ShapeOptions tune Shape.
type ShapeOptions struct {
	// From and To bound the occurrences of a series written as standalone
	// events (a series Google cannot hold as recurring): those that overlap
	// [From, To). Both must be set for any series to be expanded.
	From, To time.Time
	// Unsupported says why Google cannot hold a recurring event as a series
	// ("" when it can), before anything is sent.
	Unsupported func(ev *feed.Event) string
	// Rejected are the events Google refused. A series refused with the
	// content it still has is expanded instead of being sent again.
	Rejected []calsyncd.Rejection
	// MaxOccurrences bounds one series' expansion (default 1000).
	MaxOccurrences int
	// MaxExpanded, when set, bounds the occurrences of every series
	// together: shaping stops expanding once more than this were written
	// as single events (Shaped.ExpansionCut), so a small feed of thousands
	// of FREQ=SECONDLY series costs no more than the limit before the
	// guard refuses it.
	MaxExpanded int
}

// Expansion is a series mirrored as standalone events because Google cannot
// hold it as a recurring event.
type Expansion struct {
	Key     calsyncd.Key
	Summary string
	Reason  string
	// Occurrences were written within the window; Truncated says the
	// window held more than MaxOccurrences.
	Occurrences int
	Truncated   bool
}

// Shaped is a feed's events in the shape Google holds them.
type Shaped struct {
	Events []feed.Event
	// Expanded lists the series written as standalone events.
	Expanded []Expansion
	// Splits counts series split off at a RANGE=THISANDFUTURE override.
	Splits int
	// Orphans counts overrides written as standalone events because the
	// feed has no series for them (or their date is none of its
	// occurrences).
	Orphans int
	// ExpansionCut: expanding stopped at ShapeOptions.MaxExpanded; the
	// feed has more occurrences to write as single events than counted.
	ExpansionCut bool
	// Horizon is the earliest ShapeOptions.To at which shaping the same
	// events writes an occurrence of an expanded series this shape left
	// out (zero: none): To moves with the window, the events do not.
	Horizon  time.Time
	expanded int
}

// Shape turns a feed's events into the events Google holds for them,
// sorted by key, keyed by mapping kind:
//
//   - single events and recurring masters stay as they are (calsyncd.Top);
//   - a RECURRENCE-ID override of a series Google holds becomes an
//     exception of the instance it replaces (calsyncd.Instance), cancelled
//     ones included (Google's cancelled exceptions);
//   - a RANGE=THISANDFUTURE override splits the series as Google's "all
//     following" does: the master ends just before it (UNTIL) and a new
//     series (calsyncd.Split) starts there, with the override's content and
//     the master's rule, moved as the override moves its occurrence; later
//     overrides become exceptions of whichever series holds them;
//   - an override without a series in the feed, or whose date is none of
//     the series' occurrences, becomes a standalone event
//     (calsyncd.Standalone);
//   - a series Google cannot hold (opts.Unsupported, a refusal in
//     opts.Rejected, or a THISANDFUTURE move no rule can express) becomes
//     standalone events, one per occurrence overlapping [From, To), with
//     its overrides applied.
//
// It is pure: no I/O, and the same events give the same shape.
func Shape(events []feed.Event, opts ShapeOptions) Shaped {
	if opts.MaxOccurrences <= 0 {
		opts.MaxOccurrences = 1000
	}
	refused := make(map[calsyncd.Key]calsyncd.Rejection, len(opts.Rejected))
	for _, r := range opts.Rejected {
		refused[r.Key] = r
	}
	sh := &shaper{opts: opts, refused: refused}
	sh.out.Events = make([]feed.Event, 0, len(events))
	for _, g := range groupEvents(events) {
		sh.group(g)
	}
	slices.SortStableFunc(sh.out.Events, func(a, b feed.Event) int {
		return compareKeys(a.Key(), b.Key())
	})
	return sh.out
}

// ShapeInPlace is Shape for a caller that gives events up: when every
// event is a single event of its own UID (no series, no override), as
// most huge feeds are, Google holds them as they are, and the shape is
// made in events' own storage instead of a copy beside it. Otherwise it
// is Shape, and events are left as they were.
func ShapeInPlace(events []feed.Event, opts ShapeOptions) Shaped {
	if !allSingles(events) {
		return Shape(events, opts)
	}
	for i := range events {
		ev := &events[i]
		ev.ThisAndFuture = false
		ev.Hash = ev.ComputeHash()
	}
	return Shaped{Events: events}
}

// allSingles: every event is a single event, none recurring or an
// override, in strictly increasing key order (so no UID is repeated).
func allSingles(events []feed.Event) bool {
	for i := range events {
		ev := &events[i]
		if ev.RecurrenceID != "" || ev.IsRecurring() || ev.ThisAndFuture {
			return false
		}
		if i > 0 && compareKeys(events[i-1].Key(), ev.Key()) >= 0 {
			return false
		}
	}
	return true
}

type shaper struct {
	opts    ShapeOptions
	refused map[calsyncd.Key]calsyncd.Rejection
	out     Shaped
}

// eventGroup is one UID's master (nil when the feed has none) and
// overrides, in recurrence-id order.
type eventGroup struct {
	master    *feed.Event
	overrides []*feed.Event
}

func groupEvents(events []feed.Event) []eventGroup {
	index := map[string]int{}
	var groups []eventGroup
	for i := range events {
		ev := &events[i]
		n, ok := index[ev.UID]
		if !ok {
			n = len(groups)
			index[ev.UID] = n
			groups = append(groups, eventGroup{})
		}
		g := &groups[n]
		switch {
		case ev.RecurrenceID != "":
			g.overrides = append(g.overrides, ev)
		case g.master == nil:
			g.master = ev
		}
	}
	for i := range groups {
		slices.SortStableFunc(groups[i].overrides, func(a, b *feed.Event) int { return strings.Compare(a.RecurrenceID, b.RecurrenceID) })
	}
	return groups
}

// emit adds an event with its key's shape and a fresh content hash.
func (sh *shaper) emit(ev feed.Event, key calsyncd.Key) {
	ev.UID, ev.RecurrenceID = key.UID, key.RecurrenceID
	ev.ThisAndFuture = false
	ev.Hash = ev.ComputeHash()
	sh.out.Events = append(sh.out.Events, ev)
}

// standalone writes an override as an event of its own.
func (sh *shaper) standalone(ov *feed.Event) {
	if ov.Status == feed.StatusCancelled {
		return
	}
	c := *ov
	c.SetSeries(nil)
	sh.emit(c, calsyncd.StandaloneKey(ov.UID, ov.RecurrenceID))
	sh.out.Orphans++
}

// segment is a part of a series Google holds as one recurring event: the
// master's, or one split off at a THISANDFUTURE override.
type segment struct {
	key calsyncd.Key
	// from is the original start the segment begins at (zero for the
	// master's); end the one the next begins at (zero: none).
	from, end time.Time
	// content carries the segment's title and other fields.
	content *feed.Event
	shift   feed.Shift
	// event is what Google holds, unless the segment is expanded
	// (expand != "") or holds nothing (none).
	event  feed.Event
	expand string
	none   bool
}

func (sh *shaper) group(g eventGroup) {
	m := g.master
	if m == nil || !m.IsRecurring() || m.Status == feed.StatusCancelled {
		sh.single(g)
		return
	}
	series := m.Series
	if series == nil {
		// Recurrence lines the feed package did not read: leave them to
		// Google.
		sh.emit(*m, m.Key())
		for _, ov := range g.overrides {
			sh.emit(*ov, calsyncd.InstanceKey(m.Key(), ov.RecurrenceID))
		}
		return
	}
	segs := []*segment{{key: m.Key(), content: m}}
	var plain []*feed.Event
	for _, ov := range g.overrides {
		t, ok := ov.Original.T, !ov.Original.IsZero()
		if ov.ThisAndFuture && ok && series.Has(t) && t.After(segs[len(segs)-1].from) {
			segs = append(segs, &segment{key: calsyncd.SplitKey(m.UID, ov.RecurrenceID), from: t, content: ov})
			continue
		}
		plain = append(plain, ov)
	}
	for i, seg := range segs {
		if i+1 < len(segs) {
			seg.end = segs[i+1].from
		}
		sh.shapeSegment(seg, i, series, m)
	}
	if len(segs) > 1 {
		sh.out.Splits += len(segs) - 1
	}
	byRID := sh.place(plain, segs, series, m)
	for _, seg := range segs {
		switch {
		case seg.expand != "":
			sh.expand(seg, series, m, byRID)
		case !seg.none:
			sh.emit(seg.event, seg.key)
		}
	}
}

// single shapes a UID without a series Google holds: the event itself
// (unless an override replaces its only occurrence) and its overrides as
// events of their own.
func (sh *shaper) single(g eventGroup) {
	if m := g.master; m != nil {
		replaced := false
		for _, ov := range g.overrides {
			replaced = replaced || (!m.IsRecurring() && ov.RecurrenceID == feed.CanonicalRecurrenceID(m.Start))
		}
		if !replaced {
			sh.emit(*m, m.Key())
		}
	}
	for _, ov := range g.overrides {
		sh.standalone(ov)
	}
}

// place puts each override where Google holds it: an exception of the
// segment whose occurrence it replaces, a standalone event when it
// replaces none, or (returned by original start) an occurrence of a
// segment written as single events.
func (sh *shaper) place(overrides []*feed.Event, segs []*segment, series *feed.Series, m *feed.Event) map[int64]*feed.Event {
	byRID := map[int64]*feed.Event{}
	for _, ov := range overrides {
		t, ok := ov.Original.T, !ov.Original.IsZero()
		if !ok {
			sh.standalone(ov)
			continue
		}
		seg := segs[0]
		for _, s := range segs[1:] {
			if !t.Before(s.from) {
				seg = s
			}
		}
		switch {
		case !series.Has(t):
			sh.standalone(ov)
		case seg.expand != "":
			byRID[t.UnixNano()] = ov // applied by the expansion
		case seg.none:
			sh.standalone(ov)
		default:
			inst := *ov
			inst.Original = instanceTime(m.Start, seg.shift.Apply(t))
			sh.emit(inst, calsyncd.InstanceKey(seg.key, feed.CanonicalRecurrenceID(inst.Original)))
		}
	}
	return byRID
}

// shapeSegment works out what Google holds for a segment.
func (sh *shaper) shapeSegment(seg *segment, i int, series *feed.Series, m *feed.Event) {
	if i == 0 {
		seg.event = *m
		if !seg.end.IsZero() {
			before, ok := series.Before(seg.end)
			if !ok {
				seg.none = true
				return
			}
			seg.event.SetSeries(before)
		}
	} else {
		ov := seg.content
		if ov.Status == feed.StatusCancelled {
			// The rest of the series is cancelled.
			seg.none = true
			return
		}
		seg.shift = series.ShiftBetween(seg.from, ov.Start)
		seg.event = *ov
		seg.event.Start = instanceTime(m.Start, seg.shift.Apply(seg.from))
		seg.event.End = seg.event.Start
		if ov.Start.AllDay == m.Start.AllDay {
			seg.event.End.T = seg.event.Start.T.Add(ov.End.T.Sub(ov.Start.T))
		} else if m.Start.AllDay {
			seg.event.End.T = seg.event.Start.T.AddDate(0, 0, 1)
		}
		from, ok := series.From(seg.from, seg.end, seg.shift)
		if !ok {
			seg.expand = "its RANGE=THISANDFUTURE override moves the occurrences in a way no recurrence rule can express"
			return
		}
		seg.event.SetSeries(from)
	}
	seg.event.UID, seg.event.RecurrenceID = seg.key.UID, seg.key.RecurrenceID
	seg.event.ThisAndFuture = false
	seg.event.Hash = seg.event.ComputeHash()
	if sh.opts.Unsupported != nil {
		if why := sh.opts.Unsupported(&seg.event); why != "" {
			seg.expand = why
			return
		}
	}
	if r, ok := sh.refused[seg.key]; ok && r.Hash == seg.event.Hash {
		seg.expand = "Google refused it (" + r.Reason + ")"
		return
	}
	if lo, hi := sh.opts.From, sh.opts.To; !lo.IsZero() && !hi.IsZero() && seg.event.Series != nil {
		switch s := seg.event.Series; {
		case s.UnnamedZoneShifts(lo, hi):
			seg.expand = "its time zone is the feed's own and matches no IANA zone, so Google would expand it in UTC"
		case s.GapOccurrence(lo, hi):
			// Google may place it an hour early, as Go's time.Date
			// does, or not: only single events say where it is.
			seg.expand = "an occurrence falls in a daylight-saving gap, where Google's placement of it is undocumented"
		}
	}
}

// expand writes a segment's occurrences within the window as standalone
// events, its overrides (byRID) in place of the occurrences they replace.
func (sh *shaper) expand(seg *segment, series *feed.Series, m *feed.Event, byRID map[int64]*feed.Event) {
	x := Expansion{Key: seg.key, Summary: seg.content.Summary, Reason: seg.expand}
	defer func() { sh.out.Expanded = append(sh.out.Expanded, x) }()
	lo, hi := sh.opts.From, sh.opts.To
	if lo.IsZero() || hi.IsZero() || sh.out.ExpansionCut {
		return
	}
	content, length := segmentContent(seg, m)
	reach := overrideReach(byRID)
	next := series.Occurrences(maxWalkExpansion)
	for {
		t, ok := next()
		if !ok || (!seg.end.IsZero() && !t.Before(seg.end)) {
			return
		}
		if t.Before(seg.from) {
			continue
		}
		ev := content
		if at := seg.shift.Apply(t); !at.Before(hi.Add(reach)) {
			if h := at.Add(-reach); sh.out.Horizon.IsZero() || h.Before(sh.out.Horizon) {
				sh.out.Horizon = h
			}
			return
		}
		if ov := byRID[t.UnixNano()]; ov != nil {
			if ov.Status == feed.StatusCancelled {
				continue
			}
			ev = *ov
		} else {
			ev.Start = instanceTime(m.Start, seg.shift.Apply(t))
			ev.End = ev.Start
			ev.End.T = ev.Start.T.Add(length)
		}
		start, end := ev.Start.T, ev.End.T
		if !overlapsWindow(start, end, lo, hi) {
			continue
		}
		if x.Occurrences >= sh.opts.MaxOccurrences {
			x.Truncated = true
			return
		}
		if sh.opts.MaxExpanded > 0 && sh.out.expanded > sh.opts.MaxExpanded {
			sh.out.ExpansionCut = true
			return
		}
		x.Occurrences++
		sh.out.expanded++
		ev.SetSeries(nil)
		sh.emit(ev, calsyncd.StandaloneKey(m.UID, feed.CanonicalRecurrenceID(instanceTime(m.Start, t))))
	}
}

// segmentContent is what each occurrence of an expanded segment shows
// (the master's content, or the segment's own), without its series, and
// the occurrences' length.
func segmentContent(seg *segment, m *feed.Event) (feed.Event, time.Duration) {
	length := m.End.T.Sub(m.Start.T)
	content := *m
	if seg.content != m {
		content = *seg.content
		length = seg.content.End.T.Sub(seg.content.Start.T)
	}
	content.SetSeries(nil)
	return content, length
}

// overrideReach is how far before its occurrence an override moves it at
// most: an override may move its occurrence into the window from beyond
// it.
func overrideReach(byRID map[int64]*feed.Event) time.Duration {
	var reach time.Duration
	for rid, ov := range byRID {
		reach = max(reach, time.Unix(0, rid).Sub(ov.Start.T))
	}
	return reach
}

// maxWalkExpansion bounds the occurrences examined for one expansion.
const maxWalkExpansion = 200000

func overlapsWindow(start, end, lo, hi time.Time) bool {
	if !start.Before(hi) {
		return false
	}
	return end.After(lo) || (end.Equal(start) && !start.Before(lo))
}

// instanceTime is an occurrence's boundary with the series' zone and kind.
func instanceTime(start feed.Time, t time.Time) feed.Time {
	out := feed.Time{AllDay: start.AllDay, Zone: start.Zone, T: t}
	if !start.AllDay {
		out.T = t.In(start.T.Location())
	}
	return out
}

// ExpandedOccurrences is how many occurrences were written as single
// events, over every expanded series (at most one more than
// ShapeOptions.MaxExpanded: see ExpansionCut).
func (s Shaped) ExpandedOccurrences() int {
	n := 0
	for _, x := range s.Expanded {
		n += x.Occurrences
	}
	return n
}

// ExpansionNote says, for the subscription's status, which series are
// mirrored as standalone events ("" when none).
func ExpansionNote(xs []Expansion) string {
	if len(xs) == 0 {
		return ""
	}
	var names []string
	n := 0
	truncated := false
	for _, x := range xs {
		n += x.Occurrences
		truncated = truncated || x.Truncated
		name := x.Summary
		if name == "" {
			name = x.Key.UID
		}
		if len(names) < 5 {
			names = append(names, fmt.Sprintf("%q (%s)", name, x.Reason))
		}
	}
	if len(xs) > len(names) {
		names = append(names, fmt.Sprintf("and %d more", len(xs)-len(names)))
	}
	s := fmt.Sprintf("%s Google cannot hold %d series as recurring events; they are written as %d single events within the sync window: %s",
		ExpansionNotePrefix, len(xs), n, strings.Join(names, "; "))
	if truncated {
		s += "; some series have more occurrences than are mirrored"
	}
	return s
}

// ExpansionNotePrefix starts every expansion note, so a runner can replace
// the last one.
const ExpansionNotePrefix = "Recurring series mirrored as single events:"
