package feed

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	ical "github.com/arran4/golang-ical"
)

// treeSink builds golang-ical's components straight from the lexer's
// repaired lines: what ical.ParseCalendar makes of the cleaned text (see
// clean), without its regular-expression lexer, its copy of every line and
// a map per property. Where golang-ical cannot read a top-level component
// it is dropped with the warning the component-by-component fallback gave;
// where it cannot read a calendar property, the calendar has none, as
// before. TestScanMatchesGolangICal and FuzzScanMatchesGolangICal hold it
// to that.
//
// The tree is read-only: properties with the same parameters share one
// parameter map, a property without parameters has a nil map, and the
// values of a component share one string.
type treeSink struct {
	props    []ical.CalendarProperty
	propsBad bool // a calendar property golang-ical cannot read
	comps    []ical.Component
	// unreadable are the warnings for the components dropped.
	unreadable []Warning

	depth  int      // 0 outside VCALENDAR, 1 inside, 2 in a component...
	frames []*frame // the components open, top-level first
	spare  []*frame // frames to reuse
	// failed is why the open top-level component cannot be read (nil:
	// it can); its lines are then only counted.
	failed error
	// uid and summary name the open top-level component in a warning,
	// taken from its first "UID:" and "SUMMARY" lines.
	uid, summary []byte
	haveUID      bool
	count        map[string]int // top-level components so far, by name

	params  map[string]map[string][]string // shared parameter maps, by their text
	scratch []byte

	// evidence is what the values' bytes say of their charset.
	evidence utf8Evidence

	// limit, when set, counts the events certain to be kept (see
	// eventLimit) and stops the read past its maximum.
	limit *eventLimit
	// how is how the body stopped (Whole: at END:VCALENDAR).
	how Cut
}

// stopped is the error the read stops with (nil: it goes on).
func (t *treeSink) stopped() error {
	if t.limit != nil && t.limit.over {
		return &LimitError{Max: t.limit.max}
	}
	return nil
}

// frame is a component being built.
type frame struct {
	comp  string // as the lexer names it
	token string // the BEGIN line's value as golang-ical reads it
	ln    int    // lines read so far, as golang-ical's ParseComponent counts
	props []pendingProp
	subs  []ical.Component
	// arena holds the values of props, made one string at the END.
	arena []byte
}

type pendingProp struct {
	name   string
	params map[string][]string
	off, n int // the value is arena[off:off+n]
}

// maxSharedParams bounds the parameter maps shared by their text.
const maxSharedParams = 1024

func newTreeSink() *treeSink {
	return &treeSink{count: map[string]int{}, params: map[string]map[string][]string{}}
}

func (t *treeSink) begin(comp string) {
	t.depth++
	if t.depth == 1 || t.failed != nil {
		return
	}
	if t.depth == 2 {
		t.uid, t.summary, t.haveUID = t.uid[:0], t.summary[:0], false
	}
	if n := len(t.frames); n > 0 {
		t.frames[n-1].ln++ // golang-ical reads a sub-component as one line
	}
	var f *frame
	if n := len(t.spare); n > 0 {
		f, t.spare = t.spare[n-1], t.spare[:n-1]
	} else {
		f = &frame{}
	}
	f.comp, f.token, f.ln = comp, comp, 0
	if strings.IndexByte(comp, '\\') >= 0 {
		f.token = ical.FromText(comp)
	}
	t.frames = append(t.frames, f)
	if f.token == string(ical.ComponentVCalendar) {
		t.fail(errors.New("malformed calendar; vcalendar not where expected"))
	}
}

func (t *treeSink) end(comp string) {
	t.depth--
	if t.depth == 0 {
		return // END:VCALENDAR
	}
	if t.failed == nil {
		f := t.frames[len(t.frames)-1]
		t.frames = t.frames[:len(t.frames)-1]
		c := f.build()
		t.release(f)
		switch {
		case len(t.frames) > 0:
			parent := t.frames[len(t.frames)-1]
			parent.subs = append(parent.subs, c)
		default:
			t.comps = append(t.comps, c)
			if ev, ok := c.(*ical.VEvent); ok && t.limit != nil {
				t.limit.count(ev.Properties)
			}
		}
	}
	if t.depth == 1 {
		t.count[comp]++
		if t.failed != nil {
			t.warnUnreadable(comp)
		}
	}
}

// fail drops the open top-level component: golang-ical's error passes up
// through every component it is in, and a VEVENT's parse adds its prefix.
func (t *treeSink) fail(err error) {
	for i := len(t.frames) - 1; i >= 0; i-- {
		if t.frames[i].token == string(ical.ComponentVEvent) {
			err = fmt.Errorf("failed to parse event: %w", err)
		}
	}
	t.failed = err
	for _, f := range t.frames {
		t.release(f)
	}
	t.frames = t.frames[:0]
}

func (t *treeSink) warnUnreadable(comp string) {
	summary := ""
	if len(t.summary) > 0 {
		summary = ical.FromText(string(t.summary))
	}
	msg := fmt.Sprintf("%s %d%s skipped: unreadable: %v", comp, t.count[comp], quoteSummary(summary), t.failed)
	t.unreadable = append(t.unreadable, Warning{UID: string(t.uid), Message: msg})
	t.failed = nil
}

func (t *treeSink) release(f *frame) {
	clear(f.props)
	clear(f.subs)
	f.props, f.subs, f.arena = f.props[:0], f.subs[:0], f.arena[:0]
	t.spare = append(t.spare, f)
}

func (t *treeSink) prop(name string, rest []byte) {
	t.evidence.count(rest)
	if t.depth == 1 {
		t.calendarProp(name, rest)
		return
	}
	t.noteIdentity(name, rest)
	if t.failed != nil {
		return
	}
	f := t.frames[len(t.frames)-1]
	ln := f.ln
	f.ln++
	params, value, text, ok := t.parseFast(name, rest)
	if !ok {
		bp, err := t.parseSlow(name, rest)
		switch {
		case err != nil:
			t.fail(fmt.Errorf("parsing component property %d: %w", ln, err))
			return
		case bp == nil:
			t.fail(errComponentLine)
			return
		}
		params, value, text = bp.ICalParameters, []byte(bp.Value), false
		if len(params) == 0 {
			params = nil
		}
	}
	off := len(f.arena)
	if text {
		f.arena = appendUnescaped(f.arena, value)
	} else {
		f.arena = append(f.arena, value...)
	}
	f.props = append(f.props, pendingProp{name: name, params: params, off: off, n: len(f.arena) - off})
}

// errComponentLine is golang-ical's error for a line it cannot split.
var errComponentLine = errors.New("parsing component line")

// noteIdentity remembers the first UID and SUMMARY lines of a top-level
// component (its sub-components' too), as the warning for an unreadable
// one names it.
func (t *treeSink) noteIdentity(name string, rest []byte) {
	if !t.haveUID && name == "UID" && rest[0] == ':' {
		t.uid = append(t.uid[:0], bytes.TrimSpace(rest[1:])...)
		t.haveUID = len(t.uid) > 0
	}
	if len(t.summary) == 0 && len(name) >= 7 && name[:7] == "SUMMARY" {
		if i := bytes.IndexByte(rest, ':'); i >= 0 {
			t.summary = append(t.summary[:0], rest[i+1:]...)
		}
	}
}

func (t *treeSink) calendarProp(name string, rest []byte) {
	params, value, text, ok := t.parseFast(name, rest)
	if !ok {
		bp, err := t.parseSlow(name, rest)
		if err != nil || bp == nil {
			t.propsBad = true
			return
		}
		if len(bp.ICalParameters) == 0 {
			bp.ICalParameters = nil
		}
		t.props = append(t.props, ical.CalendarProperty{BaseProperty: *bp})
		return
	}
	v := string(value)
	if text {
		v = string(appendUnescaped(nil, value))
	}
	t.props = append(t.props, ical.CalendarProperty{BaseProperty: ical.BaseProperty{IANAToken: name, ICalParameters: params, Value: v}})
}

// parseSlow is golang-ical's own reading of a line the fast path leaves
// to it.
func (t *treeSink) parseSlow(name string, rest []byte) (*ical.BaseProperty, error) {
	t.scratch = append(append(t.scratch[:0], name...), rest...)
	return ical.ParseProperty(ical.ContentLine(t.scratch))
}

// build makes the frame a golang-ical component, of the type
// ical.GeneralParseComponent gives its name.
func (f *frame) build() ical.Component {
	var cb ical.ComponentBase
	if len(f.props) > 0 {
		values := string(f.arena)
		cb.Properties = make([]ical.IANAProperty, len(f.props))
		for i, p := range f.props {
			cb.Properties[i] = ical.IANAProperty{BaseProperty: ical.BaseProperty{IANAToken: p.name, ICalParameters: p.params, Value: values[p.off : p.off+p.n]}}
		}
	}
	if len(f.subs) > 0 {
		cb.Components = append([]ical.Component(nil), f.subs...)
	}
	switch ical.ComponentType(f.token) {
	case ical.ComponentVEvent:
		return &ical.VEvent{ComponentBase: cb}
	case ical.ComponentVTodo:
		return &ical.VTodo{ComponentBase: cb}
	case ical.ComponentVJournal:
		return &ical.VJournal{ComponentBase: cb}
	case ical.ComponentVFreeBusy:
		return &ical.VBusy{ComponentBase: cb}
	case ical.ComponentVTimezone:
		return &ical.VTimezone{ComponentBase: cb}
	case ical.ComponentVAlarm:
		return &ical.VAlarm{ComponentBase: cb}
	case ical.ComponentStandard:
		return &ical.Standard{ComponentBase: cb}
	case ical.ComponentDaylight:
		return &ical.Daylight{ComponentBase: cb}
	}
	return &ical.GeneralComponent{ComponentBase: cb, Token: f.token}
}

// appendUnescaped appends a TEXT value unescaped as ical.FromText does:
// \\ \n \N \; \, and nothing else.
func appendUnescaped(dst, v []byte) []byte {
	for {
		i := bytes.IndexByte(v, '\\')
		if i < 0 || i+1 >= len(v) {
			return append(dst, v...)
		}
		dst = append(dst, v[:i]...)
		switch v[i+1] {
		case '\\':
			dst = append(dst, '\\')
		case 'n', 'N':
			dst = append(dst, '\n')
		case ';':
			dst = append(dst, ';')
		case ',':
			dst = append(dst, ',')
		default:
			dst = append(dst, '\\')
			v = v[i+1:]
			continue
		}
		v = v[i+2:]
	}
}
