package feed

import (
	"fmt"
	"strings"
	"time"

	ical "github.com/arran4/golang-ical"

	calsyncd "github.com/calsyncd/calsyncd"
)

// LimitError is a feed with more events within the window than
// Options.MaxEvents: the read stopped there. The run is refused whole, as
// for every limit: a truncated mirror would delete what fell past the cut.
type LimitError struct {
	Max int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("feed: the feed has more than %d events within the window (limits.max_events); reading stopped there, and nothing was written or deleted: raise the limit if the feed is genuine", e.Max)
}

// ErrorClass implements calsyncd.Classed.
func (e *LimitError) ErrorClass() calsyncd.ErrorClass { return calsyncd.ClassFeedOverLimit }

// limitMargin widens the window by more than any zone's offset: a time
// read before its zone is known is certain to fall within the window
// when its wall clock falls within the window narrowed by it.
const limitMargin = 48 * time.Hour

// eventLimit counts, as the feed is read, the events certain to be among
// those Parse keeps: a VEVENT with a UID of its own, neither an override
// nor a series, its DTSTART, DTEND and DURATION each given once and
// readable, and DTSTART's wall clock within the window narrowed by
// limitMargin. Every such event is kept, whatever comes after it, so
// more of them than max means the feed is over its limit; events it
// cannot be sure of are left to the limit checked after the parse.
type eventLimit struct {
	max    int
	lo, hi time.Time // the narrowed window (zero: open)
	uids   map[string]struct{}
	over   bool
}

func newEventLimit(opts Options) *eventLimit {
	l := &eventLimit{max: opts.MaxEvents, uids: map[string]struct{}{}}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	if opts.WindowPast > 0 {
		l.lo = now.Add(-opts.WindowPast + limitMargin)
	}
	if opts.WindowFuture > 0 {
		l.hi = now.Add(opts.WindowFuture - limitMargin)
	}
	return l
}

// count notes one VEVENT read.
func (l *eventLimit) count(props []ical.IANAProperty) {
	if l.over {
		return
	}
	var uid, start, end, dur *ical.IANAProperty
	for i := range props {
		pr := &props[i]
		var slot **ical.IANAProperty
		switch pr.IANAToken {
		case "UID":
			slot = &uid
		case "DTSTART":
			slot = &start
		case "DTEND":
			slot = &end
		case "DURATION":
			slot = &dur
		case "RECURRENCE-ID", "RRULE", "RDATE":
			return
		default:
			continue
		}
		if *slot != nil {
			return
		}
		*slot = pr
	}
	if uid == nil || start == nil {
		return
	}
	id := strings.TrimSpace(validText(uid.Value))
	if id == "" {
		return
	}
	wall, ok := wallOfProp(start)
	if !ok || (end != nil && !readable(end)) {
		return
	}
	if dur != nil {
		if _, err := ParseDuration(dur.Value); err != nil {
			return
		}
	}
	if (!l.lo.IsZero() && wall.Before(l.lo)) || (!l.hi.IsZero() && !wall.Before(l.hi)) {
		return
	}
	if _, seen := l.uids[id]; seen {
		return
	}
	l.uids[id] = struct{}{}
	l.over = len(l.uids) > l.max
}

// wallOfProp reads a DATE or DATE-TIME property's wall clock, as
// parser.parseTime accepts it.
func wallOfProp(pr *ical.IANAProperty) (time.Time, bool) {
	v := strings.TrimSpace(pr.Value)
	if strings.HasPrefix(strings.ToUpper(param(pr, "VALUE")), "PERIOD") || strings.ContainsAny(v, ",/") {
		return time.Time{}, false
	}
	v = strings.TrimSuffix(strings.TrimSuffix(v, "Z"), "z")
	wall, _, err := parseICalTime(v)
	return wall, err == nil
}

func readable(pr *ical.IANAProperty) bool {
	_, ok := wallOfProp(pr)
	return ok
}
