package feed

import (
	"bytes"
	"fmt"
)

// cleaned is a feed body rewritten into the form golang-ical reads without
// tripping: one unfolded content line per "\n", upper-case names, balanced
// components, a single VCALENDAR.
type cleaned struct {
	data []byte
	// comps are the top-level components (VEVENT, VTIMEZONE, ...) as byte
	// ranges of data, for parsing them one by one when the whole fails.
	comps []span
	// header holds the calendar's own property lines.
	header []byte
	// repairs say what was mended, for the warnings.
	repairs []string
}

type span struct {
	name       string
	nth        int // 1 for the first component of its name
	start, end int
}

// maxRepairNotes bounds the repair warnings of a pathological body.
const maxRepairNotes = 20

// freeText properties are where producers leave raw, unescaped newlines: a
// line after one of them that is not a property continues its text.
var freeText = map[string]bool{"DESCRIPTION": true, "SUMMARY": true, "LOCATION": true, "COMMENT": true, "X-ALT-DESC": true}

// knownProperty lists the property names of RFC 5545 and RFC 7986 (plus
// BEGIN/END). After a free-text property a line whose name is none of these
// (nor an X- name) is taken as text: "https://..." or "Passcode: 123" in a
// pasted meeting invitation.
var knownProperty = map[string]bool{}

func init() {
	for _, n := range []string{"BEGIN", "END", "CALSCALE", "METHOD", "PRODID", "VERSION", "ATTACH", "CATEGORIES", "CLASS",
		"COMMENT", "DESCRIPTION", "GEO", "LOCATION", "PERCENT-COMPLETE", "PRIORITY", "RESOURCES", "STATUS", "SUMMARY",
		"COMPLETED", "DTEND", "DUE", "DTSTART", "DURATION", "FREEBUSY", "TRANSP", "TZID", "TZNAME", "TZOFFSETFROM",
		"TZOFFSETTO", "TZURL", "ATTENDEE", "CONTACT", "ORGANIZER", "RECURRENCE-ID", "RELATED-TO", "URL", "UID", "EXDATE",
		"EXRULE", "RDATE", "RRULE", "ACTION", "REPEAT", "TRIGGER", "CREATED", "DTSTAMP", "LAST-MODIFIED", "SEQUENCE",
		"REQUEST-STATUS", "NAME", "REFRESH-INTERVAL", "SOURCE", "COLOR", "IMAGE", "CONFERENCE", "TZUNTIL", "TZID-ALIAS-OF",
		"ACKNOWLEDGED", "PROXIMITY", "STYLED-DESCRIPTION", "STRUCTURED-DATA", "LOCATION-TYPE", "PARTICIPANT-TYPE"} {
		knownProperty[n] = true
	}
}

// eventLike components never nest in one another; a BEGIN of one inside
// another means the producer forgot an END.
var eventLike = map[string]bool{"VEVENT": true, "VTODO": true, "VJOURNAL": true, "VFREEBUSY": true, "VTIMEZONE": true}

// clean rewrites a feed body (BOM, CRLF/LF/CR, folding, case and structure
// repaired) into the text golang-ical reads. It fails only when the body is
// not a calendar (a body cut before END:VCALENDAR is read as far as its
// last complete component: see Cut). Parsing builds golang-ical's components
// from the same lines without the text (scan.go); the text is what the
// tests compare that against.
func clean(body []byte) (*cleaned, error) {
	c := &cleaned{data: make([]byte, 0, len(body)+64)}
	repairs, err := lex(bytesSource(body), &textSink{c: c})
	if err != nil {
		return nil, err
	}
	c.repairs = repairs
	return c, nil
}

// sink receives the repaired lines of a feed: BEGIN and END of each
// component kept (VCALENDAR first and last) and each property line kept,
// name upper-cased and rest (from the ';' or ':' after the name) mended.
// rest is valid only during the call.
type sink interface {
	begin(comp string)
	end(comp string)
	prop(name string, rest []byte)
}

// textSink writes the lines as text, one per "\n", noting where each
// top-level component lies and which lines are the calendar's own.
type textSink struct {
	c     *cleaned
	depth int
	start int
	count map[string]int
}

func (t *textSink) begin(comp string) {
	if t.depth == 1 {
		t.start = len(t.c.data)
	}
	t.depth++
	t.write("BEGIN:", []byte(comp))
}

func (t *textSink) end(comp string) {
	t.depth--
	t.write("END:", []byte(comp))
	if t.depth == 1 {
		if t.count == nil {
			t.count = map[string]int{}
		}
		t.count[comp]++
		t.c.comps = append(t.c.comps, span{name: comp, nth: t.count[comp], start: t.start, end: len(t.c.data)})
	}
}

func (t *textSink) prop(name string, rest []byte) {
	if t.depth == 1 {
		t.c.header = append(t.c.header, name...)
		t.c.header = append(t.c.header, rest...)
		t.c.header = append(t.c.header, '\n')
	}
	t.write(name, rest)
}

func (t *textSink) write(name string, rest []byte) {
	t.c.data = append(t.c.data, name...)
	t.c.data = append(t.c.data, rest...)
	t.c.data = append(t.c.data, '\n')
}

// lex reads a feed's lines and hands the repaired ones to out. It returns
// what it mended, and fails only when the body is not a calendar (or, from
// a stream, cannot be read).
func lex(src *lineSource, out sink) ([]string, error) {
	src.skipBOM()
	if err := sniff(src.head(512)); err != nil {
		return nil, err
	}
	l := &lexer{out: out, curInfo: unknownName}
	stopper, _ := out.(interface{ stopped() error })
	// Two stages: physical lines are unfolded the RFC 5545 way into
	// logical lines; then a logical line that cannot start a property is
	// joined to the one before (a raw newline in a DESCRIPTION, a fold
	// that lost its space). Lines are copied into the lexer's buffers, so
	// that a stream's buffer may move under them.
	lineNo := 0
	for {
		pl, ok := src.next()
		if !ok {
			break
		}
		lineNo++
		if len(pl) > 0 && (pl[0] == ' ' || pl[0] == '\t') && l.started {
			l.logical = append(l.logical, pl[1:]...)
			continue
		}
		if l.started {
			l.accept()
			if stopper != nil {
				if err := stopper.stopped(); err != nil {
					// A limit is passed: what follows is not read.
					return nil, err
				}
			}
		}
		l.logical = append(l.logical[:0], pl...)
		l.logicalNo, l.started = lineNo, true
	}
	if src.err != nil {
		return nil, fmt.Errorf("feed: read: %w", src.err)
	}
	if l.started {
		l.accept()
	}
	l.flush()
	if err := l.finish(); err != nil {
		return nil, err
	}
	return l.repairs, nil
}

// accept takes the logical line just completed (l.logical).
func (l *lexer) accept() {
	ll := l.logical
	if len(ll) == 0 {
		l.blanks++
		return
	}
	n := nameEnd(ll)
	var info *nameInfo // ll's name, once looked up
	if l.haveCur && l.curInfo.free && n > 0 {
		info = lookupName(ll[:n])
	}
	if l.haveCur && continues(l.curInfo.free, ll, n, info) {
		if l.curInfo.free {
			for ; l.blanks > 0; l.blanks-- {
				l.cur = append(l.cur, `\n`...)
			}
			l.cur = append(l.cur, `\n`...)
			l.rawBreaks++
		} else {
			l.badFolds++
		}
		l.cur = append(l.cur, ll...)
		l.blanks = 0
		return
	}
	l.flush()
	l.blanks = 0
	// The line becomes the current one; its buffer is swapped, not copied.
	l.cur, l.logical = ll, l.cur[:0]
	l.curLine, l.haveCur = l.logicalNo, true
	if info == nil {
		info = lookupName(ll[:n])
	}
	l.curInfo = info
}

// flush hands the current repaired line on.
func (l *lexer) flush() {
	if l.rawBreaks > 0 || l.badFolds > 0 {
		name := upperName(l.cur)
		if l.rawBreaks > 0 {
			l.note(fmt.Sprintf("line %d: %d raw line breaks inside %s kept as text", l.curLine, l.rawBreaks, name))
		}
		if l.badFolds > 0 {
			l.note(fmt.Sprintf("line %d: %d lines folded without the leading space joined to %s", l.curLine, l.badFolds, name))
		}
	}
	l.rawBreaks, l.badFolds = 0, 0
	if l.haveCur {
		l.line(l.cur, l.curLine, l.curInfo)
	}
	l.haveCur, l.curInfo = false, unknownName
}

// sniff rejects bodies that are clearly not a calendar, with a sentence a
// person can act on.
func sniff(data []byte) error {
	head := bytes.TrimLeft(data, " \t\r\n")
	if len(head) == 0 {
		return fmt.Errorf("feed: the feed is empty: %w", ErrNotCalendar)
	}
	if len(head) > 512 {
		head = head[:512]
	}
	if len(head) >= 15 && bytes.EqualFold(head[:15], []byte("BEGIN:VCALENDAR")) {
		return nil
	}
	lower := bytes.ToLower(head)
	if bytes.HasPrefix(lower, []byte("<!doctype html")) || bytes.HasPrefix(lower, []byte("<html")) ||
		bytes.Contains(lower, []byte("<head")) || bytes.Contains(lower, []byte("<body")) {
		return fmt.Errorf("feed: the feed answered with an HTML page — a login page? %w", ErrNotCalendar)
	}
	return fmt.Errorf("feed: the body does not start with BEGIN:VCALENDAR: %w", ErrNotCalendar)
}

// upperName returns a content line's name in upper case ("" when the line
// does not start with a name).
func upperName(line []byte) string {
	n := nameEnd(line)
	if n == 0 {
		return ""
	}
	return upperASCII(line[:n])
}

func upperASCII(b []byte) string {
	for _, c := range b {
		if c >= 'a' && c <= 'z' || c == '_' {
			u := make([]byte, len(b))
			for i, c := range b {
				switch {
				case c >= 'a' && c <= 'z':
					c -= 'a' - 'A'
				case c == '_':
					c = '-'
				}
				u[i] = c
			}
			return string(u)
		}
	}
	return string(b)
}

// nameEnd is the length of the name at the start of line, or 0 when the
// line does not start like a content line ("NAME;" or "NAME:").
func nameEnd(line []byte) int {
	i := 0
	for i < len(line) {
		c := line[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			i++
			continue
		}
		break
	}
	if i == 0 || i == len(line) || (line[i] != ':' && line[i] != ';') {
		return 0
	}
	return i
}

// continues reports whether a logical line that does not start like a
// property still belongs to the previous one (prevFree: a free-text
// property); n is nameEnd(pl) and info its name's entry (looked up when
// prevFree and n > 0).
func continues(prevFree bool, pl []byte, n int, info *nameInfo) bool {
	if n == 0 {
		return true
	}
	if !prevFree {
		return false
	}
	xName := n > 2 && (pl[0] == 'X' || pl[0] == 'x') && (pl[1] == '-' || pl[1] == '_')
	return !info.known && !xName
}

type lexer struct {
	out     sink
	repairs []string
	stack   []string
	opened  bool // BEGIN:VCALENDAR seen
	closed  bool // END:VCALENDAR seen (another BEGIN:VCALENDAR merges)
	after   int  // lines ignored after END:VCALENDAR
	notes   int
	// skip is the stack depth of a component dropped whole (a VALARM, a
	// VTODO), 0 when none is.
	skip int

	// The line stages (see lex): the logical line being unfolded, and the
	// repaired line being joined.
	logical   []byte
	logicalNo int
	started   bool
	cur       []byte
	curLine   int
	haveCur   bool
	curInfo   *nameInfo // cur's name
	blanks    int
	rawBreaks int
	badFolds  int
}

// eventProperties are the VEVENT properties normalisation reads. The rest
// (ATTENDEE, X- properties, components other than VALARM) never reach
// golang-ical: that halves its work on real feeds and removes what it most
// often chokes on.
var eventProperties = map[string]bool{
	"UID": true, "DTSTART": true, "DTEND": true, "DURATION": true, "SUMMARY": true, "DESCRIPTION": true,
	"LOCATION": true, "URL": true, "STATUS": true, "TRANSP": true, "CLASS": true, "SEQUENCE": true,
	"RECURRENCE-ID": true, "LAST-MODIFIED": true, "DTSTAMP": true, "RRULE": true, "RDATE": true,
	"EXDATE": true, "EXRULE": true, "CATEGORIES": true,
}

// alarmProperties are the properties of a VEVENT's VALARM that reminders
// read; its other properties and components are dropped.
var alarmProperties = map[string]bool{"ACTION": true, "TRIGGER": true}

// optional properties were added for the render stage (filters,
// reminders): one golang-ical cannot read must not cost its event, so a
// line of them whose parameters are not plain is dropped.
func optional(name string) bool { return name == "CATEGORIES" || name == "ACTION" || name == "TRIGGER" }

// ignoredComponents are top-level components an event sync never reads.
var ignoredComponents = map[string]bool{"VTODO": true, "VJOURNAL": true, "VFREEBUSY": true, "VAVAILABILITY": true}

func (l *lexer) note(s string) {
	l.notes++
	if l.notes <= maxRepairNotes {
		l.repairs = append(l.repairs, s)
	} else if l.notes == maxRepairNotes+1 {
		l.repairs = append(l.repairs, "more repairs not listed")
	}
}

func (l *lexer) begin(comp string) {
	// A VEVENT keeps its VALARMs (for reminders), and nothing inside them.
	inEvent := len(l.stack) > 1 && l.stack[len(l.stack)-1] == "VEVENT" && comp != "VALARM"
	inAlarm := l.inEventAlarm()
	if l.skip == 0 && (len(l.stack) == 1 && ignoredComponents[comp] || inEvent || inAlarm) {
		l.skip = len(l.stack) + 1
	}
	l.stack = append(l.stack, comp)
	if l.skip == 0 {
		l.out.begin(comp)
	}
}

func (l *lexer) end() {
	comp := l.stack[len(l.stack)-1]
	l.stack = l.stack[:len(l.stack)-1]
	if comp == "VCALENDAR" {
		return // written by finish, once
	}
	if l.skip > 0 {
		if len(l.stack) < l.skip {
			l.skip = 0
		}
		return
	}
	l.out.end(comp)
}

// inEventAlarm reports whether the innermost open component is a VEVENT's
// VALARM.
func (l *lexer) inEventAlarm() bool {
	n := len(l.stack)
	return n > 2 && l.stack[n-1] == "VALARM" && l.stack[n-2] == "VEVENT"
}

// line handles one repaired line, whose name is info.
func (l *lexer) line(line []byte, no int, info *nameInfo) {
	n := nameEnd(line)
	if n == 0 {
		l.note(fmt.Sprintf("line %d: not a content line, ignored", no))
		return
	}
	name, known := info.name, info != unknownName
	rest := line[n:]
	if name == "BEGIN" || name == "END" {
		if rest[0] != ':' {
			l.note(fmt.Sprintf("line %d: %s with parameters, ignored", no, name))
			return
		}
		comp := internName(bytes.TrimSpace(rest[1:]))
		if name == "BEGIN" {
			l.beginLine(comp, no)
		} else {
			l.endLine(comp, no)
		}
		return
	}
	if l.closed || !l.opened {
		if l.opened {
			l.after++
		}
		return
	}
	if l.skip > 0 {
		return
	}
	switch top := l.stack[len(l.stack)-1]; {
	case top == "VEVENT" && !info.event:
		return
	case top == "VALARM" && !info.alarm && l.inEventAlarm():
		return
	}
	if !known {
		name = upperASCII(line[:n])
	}
	fixed, ok := fixParams(rest)
	if !ok {
		l.note(fmt.Sprintf("line %d: %s has no value, ignored", no, name))
		return
	}
	if len(l.stack) > 1 && optional(name) && fixed[0] == ';' && paramsEnd(fixed) < 0 {
		return
	}
	l.out.prop(name, fixed)
}

func (l *lexer) beginLine(comp string, no int) {
	switch {
	case comp == "VCALENDAR" && !l.opened:
		l.opened = true
		l.begin(comp)
	case comp == "VCALENDAR" && l.closed:
		// A second calendar concatenated to the first: merge them.
		l.closed = false
		l.stack = append(l.stack, comp)
	case comp == "VCALENDAR":
		l.note(fmt.Sprintf("line %d: nested BEGIN:VCALENDAR ignored", no))
	case !l.opened || l.closed:
		if l.opened {
			l.after++
		}
	case comp == "":
		l.note(fmt.Sprintf("line %d: BEGIN without a component name, ignored", no))
	default:
		if eventLike[comp] {
			// Events never nest: a BEGIN inside one means a forgotten END.
			for len(l.stack) > 1 {
				l.note(fmt.Sprintf("line %d: BEGIN:%s inside %s; closed %s first", no, comp, l.stack[len(l.stack)-1], l.stack[len(l.stack)-1]))
				l.end()
			}
		}
		l.begin(comp)
	}
}

func (l *lexer) endLine(comp string, no int) {
	if !l.opened || l.closed {
		if l.opened {
			l.after++
		}
		return
	}
	at := -1
	for i := len(l.stack) - 1; i >= 0; i-- {
		if l.stack[i] == comp {
			at = i
			break
		}
	}
	if at < 0 {
		l.note(fmt.Sprintf("line %d: END:%s without its BEGIN, ignored", no, comp))
		return
	}
	for len(l.stack) > at+1 {
		l.note(fmt.Sprintf("line %d: END:%s closes an unclosed %s", no, comp, l.stack[len(l.stack)-1]))
		l.end()
	}
	l.end()
	if comp == "VCALENDAR" {
		l.closed = true
	}
}

func (l *lexer) finish() error {
	if !l.opened {
		return fmt.Errorf("feed: the body has no BEGIN:VCALENDAR: %w", ErrNotCalendar)
	}
	if !l.closed {
		l.cut()
	}
	if l.after > 0 {
		l.note(fmt.Sprintf("%d lines after END:VCALENDAR ignored", l.after))
	}
	l.out.end("VCALENDAR")
	return nil
}
