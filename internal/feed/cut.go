package feed

import "fmt"

// Cut says how a body that stops before END:VCALENDAR stops. Some
// producers never write END:VCALENDAR (PagerDuty schedules, hand-written
// PHP calendars); a download can also stop short. Either way every
// component the body holds whole (its END seen) is read as it is; what the
// body does not hold cannot be told from what it dropped, so a caller must
// delete nothing on the strength of such a body.
type Cut int

// Cuts.
const (
	// Whole: the body ends with END:VCALENDAR.
	Whole Cut = iota
	// CutBetween: the body stops after a complete component (every BEGIN
	// has its END) without END:VCALENDAR: the shape of a producer that
	// never writes it, or of a download that stopped between two events.
	CutBetween
	// CutInside: the body stops inside a component (a VEVENT with no
	// END:VEVENT), which is dropped: a download that broke off.
	CutInside
)

func (c Cut) String() string {
	switch c {
	case CutBetween:
		return "ends without END:VCALENDAR, after a complete component"
	case CutInside:
		return "ends inside a component, without END:VCALENDAR"
	}
	return "whole"
}

// cutter is a sink told that the body stopped before END:VCALENDAR with
// open components begun and never ended: it drops them (they are not
// whole) and records how the body stopped.
type cutter interface {
	cut(open int, how Cut)
}

// cut closes a body that stopped before END:VCALENDAR: the components
// still open are dropped, not closed (a VEVENT without its END may have
// lost any of its lines), and the sink is told how the body stopped.
func (l *lexer) cut() {
	how := CutBetween
	// stack[0] is the VCALENDAR; a component dropped whole (skip) was
	// never handed to the sink, nor were those inside it.
	open, emitted := len(l.stack)-1, len(l.stack)-1
	if l.skip > 0 {
		emitted = l.skip - 2
	}
	if open > 0 {
		how = CutInside
		l.note(fmt.Sprintf("the body ends inside %s, without END:VCALENDAR: the unfinished %s is dropped", l.stack[1], l.stack[1]))
	} else {
		l.note("the body ends without END:VCALENDAR: read as far as its last complete component")
	}
	if c, ok := l.out.(cutter); ok {
		c.cut(emitted, how)
	}
	l.stack, l.skip = l.stack[:1], 0
	l.closed = true
}

func (t *textSink) cut(open int, _ Cut) {
	if open > 0 && t.depth > 1 {
		t.c.data = t.c.data[:t.start]
	}
	t.depth = 1
}

func (t *treeSink) cut(_ int, how Cut) {
	for _, f := range t.frames {
		t.release(f)
	}
	t.frames, t.failed, t.depth, t.how = t.frames[:0], nil, 1, how
}
