package feed

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	ical "github.com/arran4/golang-ical"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/tz"
)

// ErrNotCalendar is wrapped by errors for input that is not an iCalendar
// feed at all (an HTML login page, an empty body, JSON...).
var ErrNotCalendar = calsyncd.NewError(calsyncd.ClassFeedInvalid, "not an iCalendar feed")

// Identity says how events are keyed.
type Identity string

// Identities.
const (
	// IdentityUID keys events by UID (and RECURRENCE-ID), as RFC 5545 means.
	IdentityUID Identity = "uid"
	// IdentityContent keys events by a hash of what they are (title, start,
	// end, recurrence), for servers that mint new UIDs on every fetch.
	IdentityContent Identity = "content"
)

// Options tune parsing.
type Options struct {
	// DefaultZone resolves floating times when the feed names no
	// X-WR-TIMEZONE ("" means UTC).
	DefaultZone string
	// Identity is how events are keyed; "" means IdentityUID.
	Identity Identity
	// WindowPast and WindowFuture bound the events kept, relative to Now:
	// an event is kept when it overlaps [Now-WindowPast, Now+WindowFuture];
	// a recurring master while any instance does. Zero means unbounded.
	WindowPast   time.Duration
	WindowFuture time.Duration
	// Now is the reference time of the window (zero: time.Now()).
	Now time.Time
	// Charset is the charset the response declared (its Content-Type's
	// charset parameter; "" when none). A body in another charset is
	// decoded from it, unless its bytes show UTF-8 (see textCharset);
	// without one, text that is not UTF-8 is read as Windows-1252.
	Charset string
	// MaxEvents, when set, is limits.max_events: the read stops, with a
	// *LimitError, once the feed has more events than that which are
	// certain to be kept within the window, so that an oversized feed
	// is refused before it is held whole.
	MaxEvents int
}

// Warning is a problem with one event or property that was skipped or
// repaired without failing the feed.
type Warning struct {
	UID     string
	Message string
}

func (w Warning) String() string {
	if w.UID == "" {
		return w.Message
	}
	return w.UID + ": " + w.Message
}

// Calendar is a parsed feed.
type Calendar struct {
	Name     string
	TimeZone string
	Events   []Event
	Warnings []Warning
	// OutsideWindow counts events dropped because they fall outside the
	// window; Outside are their keys. They left the window, not the feed:
	// a caller that mirrors only the window must not delete them.
	OutsideWindow int
	Outside       []calsyncd.Key
	// Cut says whether the body stopped before END:VCALENDAR: its whole
	// components are read, but what it lacks may have been cut off, so a
	// caller must not delete on its strength.
	Cut Cut
	// RereadAt is the earliest Now at which parsing the same body keeps
	// occurrences this parse left out beyond the window's end (an event
	// past it, an extra RRULE's RDATEs written only so far): zero when
	// there is none.
	RereadAt time.Time
}

// Parse reads an iCalendar document and normalises its events. It fails
// only when the input is not a calendar (HTML, empty) or cannot be read (a
// body cut before END:VCALENDAR is read as far as it is whole: Cut); a bad event is skipped with a warning naming it. Events come
// out sorted by key. The document is read a buffer at a time: only the
// parsed components are held, never the whole text.
func Parse(r io.Reader, opts Options) (*Calendar, error) {
	dec, cerr := decoderFor(opts.Charset)
	if dec.body != nil {
		r = decodeReader(r, dec.body)
	}
	cal, err := parse(readerSource(r), opts)
	cal.charsetWarning(cerr)
	return cal, err
}

// ParseBytes is Parse on a body already in memory. The calendar does not
// keep data.
func ParseBytes(data []byte, opts Options) (*Calendar, error) {
	dec, cerr := decoderFor(opts.Charset)
	if dec.body != nil {
		data = decodeBytes(data, dec.body)
	}
	cal, err := parse(bytesSource(data), opts)
	cal.charsetWarning(cerr)
	return cal, err
}

// charsetWarning notes a charset label no one knows (the body is then
// read as UTF-8, falling back to Windows-1252).
func (c *Calendar) charsetWarning(err error) {
	if c != nil && err != nil {
		c.Warnings = append(c.Warnings, Warning{Message: err.Error() + "; read as UTF-8 (Windows-1252 where it is not)"})
	}
}

func parse(src *lineSource, opts Options) (*Calendar, error) {
	p, err := parseWith(src, opts)
	if err != nil {
		return nil, err
	}
	return p.cal, nil
}

// parseWith is parse, returning the parser (for its counters).
func parseWith(src *lineSource, opts Options) (*parser, error) {
	tree := newTreeSink()
	if opts.MaxEvents > 0 {
		tree.limit = newEventLimit(opts)
	}
	repairs, err := lex(src, tree)
	if err != nil {
		return nil, err
	}
	p := &parser{opts: opts, cal: &Calendar{}, zones: tz.NewResolver(), warned: map[string]bool{},
		charset: &textCharset{utf8: tree.evidence.isUTF8(), ascii: tree.evidence.isASCII()}}
	if dec, _ := decoderFor(opts.Charset); dec.text != nil {
		// A single-byte charset decodes the text values, unless the
		// bytes show UTF-8 (a server's default label on a UTF-8 feed).
		p.charset.fallback = dec.text
		if p.charset.utf8 {
			p.warn("", fmt.Sprintf("the response declares charset %q but the feed's bytes are UTF-8: read as UTF-8", opts.Charset))
		}
	}
	for _, rep := range repairs {
		p.warn("", "repaired: "+rep)
	}
	p.cal.Warnings = append(p.cal.Warnings, tree.unreadable...)
	p.cal.Cut = tree.how
	props := tree.props
	if tree.propsBad {
		// golang-ical reads no calendar property when one is unreadable.
		props = nil
	}
	p.calendarProps(props)
	comps := tree.comps
	tree = nil
	p.run(comps)
	return p, nil
}

func quoteSummary(s string) string {
	if s == "" {
		return ""
	}
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return fmt.Sprintf(" (%q)", s)
}

type parser struct {
	opts     Options
	cal      *Calendar
	zones    *tz.Resolver
	floating *tz.Zone
	warned   map[string]bool
	// charset makes the text values UTF-8.
	charset *textCharset
	// verdicts are neverMatches' verdicts by rule and DTSTART; ruleDays
	// the days left for it to walk (set with verdicts).
	verdicts map[string]string
	ruleDays int
}

func (p *parser) warn(uid, msg string) {
	p.cal.Warnings = append(p.cal.Warnings, Warning{UID: uid, Message: msg})
}

// warnOnce warns about a feed-wide condition (an unknown zone) once.
func (p *parser) warnOnce(key, msg string) {
	if !p.warned[key] {
		p.warned[key] = true
		p.warn("", msg)
	}
}

func (p *parser) calendarProps(props []ical.CalendarProperty) {
	for _, pr := range props {
		switch strings.ToUpper(pr.IANAToken) {
		case "X-WR-CALNAME":
			p.cal.Name = textValue(&pr.BaseProperty)
		case "NAME":
			if p.cal.Name == "" {
				p.cal.Name = textValue(&pr.BaseProperty)
			}
		case "X-WR-TIMEZONE":
			p.cal.TimeZone = strings.TrimSpace(pr.Value)
		}
	}
	p.cal.Name = p.charset.text(p.cal.Name)
}

func (p *parser) run(comps []ical.Component) {
	// Every TZID's years are noted before any zone is resolved: a first
	// pass reads the VTIMEZONEs and the events' times; the second
	// normalises each event and lets its component go.
	var raw rawEvent
	nEvents := p.readZones(comps, &raw)
	p.setFloating()
	events := make([]Event, 0, nEvents)
	series := make([]*series, 0, nEvents)
	index := 0
	for i, c := range comps {
		c, ok := c.(*ical.VEvent)
		if !ok {
			continue
		}
		comps[i] = nil
		index++
		p.extract(&raw, c.Properties, index)
		raw.subs = c.Components
		if raw.err != nil {
			p.warn(raw.uid, fmt.Sprintf("event %d%s skipped: %v", raw.index, quoteSummary(raw.text(pSummary)), raw.err))
			continue
		}
		ev, s, err := p.normalise(&raw)
		if err != nil {
			p.warn(raw.uid, fmt.Sprintf("event %d%s skipped: %v", raw.index, quoteSummary(raw.text(pSummary)), err))
			continue
		}
		events = append(events, ev)
		series = append(series, s)
	}
	events, series = p.settleKeys(events, series)
	if p.opts.WindowPast > 0 || p.opts.WindowFuture > 0 {
		events = p.window(events)
	}
	var text []byte // the hashed text, one buffer for every event
	for i := range events {
		events[i].Hash, text = events[i].Shown().appendHash(text, events[i].ThisAndFuture)
	}
	p.cal.Events = events
}

// readZones is run's first pass: it defines the feed's VTIMEZONEs and,
// when there are any, notes the years each TZID is used in (raw is the
// scratch event extract reuses). It returns the number of VEVENTs.
func (p *parser) readZones(comps []ical.Component, raw *rawEvent) (nEvents int) {
	defined := false
	for _, c := range comps {
		switch c := c.(type) {
		case *ical.VTimezone:
			ids, vz, err := parseVTimezone(c)
			if err != nil {
				p.warn("", fmt.Sprintf("VTIMEZONE %s ignored: %v", strings.Join(ids, ", "), err))
				continue
			}
			for _, id := range ids {
				p.zones.Define(id, vz)
			}
			defined = true
		case *ical.VEvent:
			nEvents++
		}
	}
	if defined {
		// The years matter only to matching a VTIMEZONE to an IANA zone.
		index := 0
		for _, c := range comps {
			if c, ok := c.(*ical.VEvent); ok {
				index++
				p.extract(raw, c.Properties, index)
			}
		}
	}
	return nEvents
}

// setFloating picks the zone floating times are read in: the feed's
// X-WR-TIMEZONE, else the subscription's zone, else UTC.
func (p *parser) setFloating() {
	for _, name := range []string{p.cal.TimeZone, p.opts.DefaultZone} {
		if name == "" {
			continue
		}
		z := p.zones.Resolve(name)
		if z.Loc != nil {
			p.floating = z
			if z.Name != tz.UTC {
				p.zones.Prefer(z.Name)
			}
			return
		}
		p.warnOnce("floating:"+name, fmt.Sprintf("unknown calendar time zone %q ignored", name))
	}
	p.floating = &tz.Zone{Name: tz.UTC, Loc: time.UTC, How: tz.ByName}
}

// settleKeys gives events without a UID a stable synthetic one, resolves
// duplicate keys, applies content identity and sorts by key.
func (p *parser) settleKeys(events []Event, ss []*series) ([]Event, []*series) {
	idx := make([]int, len(events))
	for i := range idx {
		idx[i] = i
	}
	synthesiseUIDs(events)
	p.promoteSeriesInstances(events, ss)
	alignRecurrenceIDs(events, ss)
	// Duplicate keys: keep the newest version. The events are sorted in
	// place, not copied.
	slices.SortStableFunc(idx, func(a, b int) int {
		ka, kb := events[a].Key(), events[b].Key()
		if c := strings.Compare(ka.UID, kb.UID); c != 0 {
			return c
		}
		if c := strings.Compare(ka.RecurrenceID, kb.RecurrenceID); c != 0 {
			return c
		}
		return newer(&events[a], &events[b], ss[a], ss[b])
	})
	permute(events, ss, idx)
	outE, outS := events[:0], ss[:0]
	for n := 0; n < len(events); {
		m := n + 1
		for m < len(events) && events[m].Key() == events[n].Key() {
			m++
		}
		if m-n > 1 {
			ev := &events[n]
			p.warn(ev.UID, fmt.Sprintf("%d events share UID %q%s; kept the one with SEQUENCE %d%s",
				m-n, ev.UID, ridNote(ev.RecurrenceID), ev.Sequence, quoteSummary(ev.Summary)))
		}
		outE = append(outE, events[n])
		outS = append(outS, ss[n])
		n = m
	}
	clear(events[len(outE):])
	clear(ss[len(outS):])
	outE, outS = periodOverrides(outE, outS)
	if p.opts.Identity == IdentityContent {
		outE, outS = contentIdentity(outE, outS)
	}
	return outE, outS
}

// synthesiseUIDs gives events that have no UID a synthetic one from their
// identity. Identical twins get a numbered suffix, numbered in content
// order so that the file's order does not matter.
func synthesiseUIDs(events []Event) {
	synth := map[string][]int{}
	for i := range events {
		if events[i].UID == "" {
			id := "calsyncd-" + events[i].identityHash()[:24]
			synth[id] = append(synth[id], i)
		}
	}
	for id, is := range synth {
		slices.SortFunc(is, func(a, b int) int { return strings.Compare(events[a].ComputeHash(), events[b].ComputeHash()) })
		for n, i := range is {
			events[i].UID = id
			if n > 0 {
				events[i].UID = fmt.Sprintf("%s-%d", id, n+1)
			}
		}
	}
}

// promoteSeriesInstances settles components that carry a RECURRENCE-ID
// and recurrence lines of their own. Where the UID has no master, the
// component is the master: its RRULE, RDATEs and EXDATEs are the series
// and its RECURRENCE-ID is dropped (RFC 5545 gives recurrence lines to the
// master only, so the exporter meant a series; dropping the lines instead
// would lose every occurrence but one). Of several such components, the
// one with the earliest RECURRENCE-ID is the master and the others stay
// its overrides. Where the UID has a master, the component is an override
// and its lines are ignored, as RFC 5545 reads them.
func (p *parser) promoteSeriesInstances(events []Event, ss []*series) {
	if !slices.ContainsFunc(ss, func(s *series) bool { return s.own() != nil }) {
		return // nearly every feed: nothing to index
	}
	masters := map[string]bool{}
	pick := map[string]int{}
	for i := range events {
		if events[i].RecurrenceID == "" {
			masters[events[i].UID] = true
		}
	}
	for i := range events {
		ev := &events[i]
		if ss[i].own() == nil || masters[ev.UID] {
			continue
		}
		if j, ok := pick[ev.UID]; !ok || ev.RecurrenceID < events[j].RecurrenceID {
			pick[ev.UID] = i
		}
	}
	for i := range events {
		ev := &events[i]
		if ss[i].own() == nil {
			continue
		}
		if j, ok := pick[ev.UID]; ok && j == i {
			p.warn(ev.UID, fmt.Sprintf("RECURRENCE-ID %s with recurrence lines and no master: read as the master of its series", ev.RecurrenceID))
			ev.RecurrenceID, ev.Original, ev.ThisAndFuture = "", Time{}, false
			ev.SetSeries(ss[i].own())
		} else {
			p.warn(ev.UID, fmt.Sprintf("recurrence lines on the instance %s ignored", ev.RecurrenceID))
		}
		if ss[i].rare != nil {
			ss[i].rare.own = nil
		}
	}
}

// periodOverrides writes each RDATE PERIOD occurrence whose length is not
// its series' as an override of that occurrence, with the master's content
// and the period's end, unless the feed overrides the occurrence itself.
// Events stay sorted by key.
func periodOverrides(events []Event, ss []*series) ([]Event, []*series) {
	if !slices.ContainsFunc(ss, func(s *series) bool { return len(s.periods()) > 0 }) {
		return events, ss // nearly every feed: nothing to index
	}
	have := map[calsyncd.Key]bool{}
	added := false
	n := len(events)
	for i := 0; i < n; i++ {
		have[events[i].Key()] = true
	}
	for i := 0; i < n; i++ {
		m := &events[i]
		if len(ss[i].periods()) == 0 || m.RecurrenceID != "" || m.Series == nil {
			continue
		}
		loc := m.Start.T.Location()
		for _, pd := range ss[i].periods() {
			start := Time{T: pd.start.In(loc), Zone: m.Start.Zone}
			ov := *m
			ov.SetSeries(nil)
			ov.RecurrenceID = CanonicalRecurrenceID(start)
			if have[ov.Key()] || !m.Series.Has(start.T) {
				continue
			}
			have[ov.Key()] = true
			ov.Original, ov.Start = start, start
			ov.End = Time{T: pd.end.In(loc), Zone: m.Start.Zone}
			events = append(events, ov)
			ss = append(ss, &series{})
			added = true
		}
		ss[i].rare = nil
	}
	if added {
		idx := make([]int, len(events))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			ka, kb := events[a].Key(), events[b].Key()
			if c := strings.Compare(ka.UID, kb.UID); c != 0 {
				return c
			}
			return strings.Compare(ka.RecurrenceID, kb.RecurrenceID)
		})
		permute(events, ss, idx)
	}
	return events, ss
}

// permute reorders events and ss in place so that position k holds what
// was at idx[k], following each cycle of the permutation; idx is spent.
func permute(events []Event, ss []*series, idx []int) {
	for start := range idx {
		if idx[start] < 0 {
			continue
		}
		tmpE, tmpS := events[start], ss[start]
		k := start
		for {
			next := idx[k]
			idx[k] = -1
			if next == start {
				events[k], ss[k] = tmpE, tmpS
				break
			}
			events[k], ss[k] = events[next], ss[next]
			k = next
		}
	}
}

func ridNote(rid string) string {
	if rid == "" {
		return ""
	}
	return " and RECURRENCE-ID " + rid
}

// newer orders two versions of one event, newest first: highest SEQUENCE,
// then latest LAST-MODIFIED, then latest DTSTAMP, then content hash (a
// stable, arbitrary tiebreak).
func newer(a, b *Event, sa, sb *series) int {
	if a.Sequence != b.Sequence {
		if a.Sequence > b.Sequence {
			return -1
		}
		return 1
	}
	if c := sb.lastModified.Compare(sa.lastModified); c != 0 {
		return c
	}
	if c := sb.stamp.Compare(sa.stamp); c != 0 {
		return c
	}
	return strings.Compare(a.ComputeHash(), b.ComputeHash())
}
