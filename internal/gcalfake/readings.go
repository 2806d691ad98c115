package gcalfake

import (
	"fmt"
	"strconv"
	"strings"
)

// Readings choose how the emulator answers where Google's documentation is
// silent or contradicts itself, one switch per open question, so that code
// can be tested under every plausible answer (AllReadings, or
// CoveringReadings where a test is slow). The zero value is the emulator's
// long-standing behaviour. Set them in Options or later with SetReadings.
type Readings struct {
	// AllDayOriginalStart: what events.instances does with the date form
	// (YYYY-MM-DD) of originalStart, which the discovery document does not
	// describe. The RFC 3339 form is always honoured.
	AllDayOriginalStart AllDayOriginalStart
	// SeriesUpdate: what an update of a recurring event (events.update,
	// events.patch, or Edit by a person) does to its stored exceptions.
	SeriesUpdate SeriesUpdate
	// OffRule: whether an exception whose originalStartTime is no longer
	// an occurrence of its series (the rule, an EXDATE or the start
	// changed) is still shown.
	OffRule OffRule
	// PropertyRepeats: how repeated privateExtendedProperty (or
	// sharedExtendedProperty) constraints of events.list combine. Private
	// and shared constraints are always ANDed together.
	PropertyRepeats PropertyRepeats
	// InstanceIDs: whether instance ids can be derived from the series id
	// and the original start.
	InstanceIDs InstanceIDs
	// Filters: whether list-style answers contain only what their filters
	// ask for.
	Filters Filters
	// ExRule: what Google does with an EXRULE line (RFC 2445's exclusion
	// rule, dropped by RFC 5545), which its documentation lists among the
	// recurrence lines an event takes without saying that it is applied.
	ExRule ExRule
}

// AllDayOriginalStart is how events.instances treats originalStart=YYYY-MM-DD.
type AllDayOriginalStart int

const (
	// OriginalStartHonoured lists the instance of an all-day series on
	// that date (a timed series answers 400 badRequest, as for any
	// unreadable originalStart).
	OriginalStartHonoured AllDayOriginalStart = iota
	// OriginalStartIgnored drops the filter, on any series: every
	// instance is listed (timeMin, timeMax, showDeleted, maxResults and
	// paging still apply).
	OriginalStartIgnored
	// OriginalStartRejected answers 400 global/invalid "Invalid value for:
	// originalStart" (locationType parameter), on any series.
	OriginalStartRejected
)

// SeriesUpdate is what updating a series does to its exceptions.
type SeriesUpdate int

const (
	// ExceptionsKept leaves exceptions exactly as they are.
	ExceptionsKept SeriesUpdate = iota
	// ExceptionsPropagated gives every exception, on every update of its
	// series, the series' new value of each field it still shared with
	// the old series (as Google's "all events" edit does): a top-level
	// field whose JSON equals the old series' (both absent counts),
	// extendedProperties key by key, and start and end together when the
	// exception was not moved (its start and end were the old series'
	// instance at its original start) and its original start is still an
	// occurrence (then they become the new series' instance there; the
	// original start itself is immutable). status and sequence are never
	// propagated.
	ExceptionsPropagated
	// ExceptionsDropped discards every stored exception (moved, retitled
	// and cancelled ones) when an update changes the series' start or end
	// (date, instant or timeZone) or its recurrence (the set of its lines:
	// the same lines in another order are no change). Its instances are
	// the plain ones again; other updates keep exceptions as they are.
	ExceptionsDropped
)

// OffRule is whether exceptions left off a changed rule are shown.
type OffRule int

const (
	// OffRuleHidden hides them everywhere (list, instances, Agenda); they
	// stay readable with get.
	OffRuleHidden OffRule = iota
	// OffRuleKept shows them while their series is a live recurring event:
	// listed, in place of no instance, by events.instances, events.list
	// with and without singleEvents, and in Agenda.
	OffRuleKept
)

// PropertyRepeats is how repeated extended-property constraints combine.
type PropertyRepeats int

const (
	// PropertiesAnd: an event must match every constraint (the discovery
	// document).
	PropertiesAnd PropertyRepeats = iota
	// PropertiesOr: an event must match one of them (the extended
	// properties guide).
	PropertiesOr
)

// InstanceIDs is the form of instance ids.
type InstanceIDs int

const (
	// InstanceIDsDerived: "{seriesId}_{YYYYMMDD}" (all-day) or
	// "{seriesId}_{YYYYMMDDTHHMMSSZ}" (timed, the original start in UTC),
	// addressable by get, update, patch and delete before any exception
	// is stored.
	InstanceIDsDerived InstanceIDs = iota
	// InstanceIDsOpaque: Google's announced format, ids that cannot be
	// derived (26 base32hex characters hashed from the seed, the series id
	// and the original start, unrelated to the series id). An instance is
	// addressable by the id a listing or get gave it; a derived-looking id
	// answers 404.
	InstanceIDsOpaque
)

// Filters is whether server-side filters can be trusted.
type Filters int

const (
	// FiltersExact: answers hold exactly what the filters select.
	FiltersExact Filters = iota
	// FiltersLoose: a filtered answer also holds some items that fail the
	// filter (events.list's iCalUID, privateExtendedProperty,
	// sharedExtendedProperty, timeMin and timeMax; events.instances'
	// originalStart, timeMin and timeMax) but would be listed without it
	// (showDeleted and the visibility of exceptions still hold): the first
	// such candidate in the answer's order and then those whose seeded
	// hash picks them, at most looseMax per listing, the same on every
	// page and every repeat of the query.
	FiltersLoose
)

// ExRule is what an EXRULE recurrence line does.
type ExRule int

const (
	// ExRuleApplied excludes the rule's occurrences from the series, as
	// RFC 2445 reads it: the rule is anchored at the series' start, which
	// it excludes only when it produces it itself.
	ExRuleApplied ExRule = iota
	// ExRuleIgnored stores the line but shows every instance it would
	// exclude, whenever it was stored (the reading in force decides).
	ExRuleIgnored
	// ExRuleRejected answers insert, update and patch of an event with an
	// EXRULE line 400 "Invalid recurrence rule." (one stored before is
	// shown as under ExRuleIgnored).
	ExRuleRejected
)

// looseMax bounds the items a loose filter lets through per listing, and
// looseOdds is the chance (1 in looseOdds) that a candidate past the first
// is one of them.
const (
	looseMax  = 3
	looseOdds = 4
)

// readingSwitch describes one field of Readings for String, ParseReadings,
// AllReadings and CoveringReadings. Its values are in the order of the
// field's constants, the zero value first.
type readingSwitch struct {
	name   string
	values []string
	get    func(Readings) int
	set    func(*Readings, int)
}

var readingSwitches = []readingSwitch{
	{"allday", []string{"honoured", "ignored", "rejected"},
		func(r Readings) int { return int(r.AllDayOriginalStart) },
		func(r *Readings, v int) { r.AllDayOriginalStart = AllDayOriginalStart(v) }},
	{"update", []string{"kept", "propagated", "dropped"},
		func(r Readings) int { return int(r.SeriesUpdate) },
		func(r *Readings, v int) { r.SeriesUpdate = SeriesUpdate(v) }},
	{"offrule", []string{"hidden", "kept"},
		func(r Readings) int { return int(r.OffRule) },
		func(r *Readings, v int) { r.OffRule = OffRule(v) }},
	{"props", []string{"and", "or"},
		func(r Readings) int { return int(r.PropertyRepeats) },
		func(r *Readings, v int) { r.PropertyRepeats = PropertyRepeats(v) }},
	{"ids", []string{"derived", "opaque"},
		func(r Readings) int { return int(r.InstanceIDs) },
		func(r *Readings, v int) { r.InstanceIDs = InstanceIDs(v) }},
	{"filters", []string{"exact", "loose"},
		func(r Readings) int { return int(r.Filters) },
		func(r *Readings, v int) { r.Filters = Filters(v) }},
	{"exrule", []string{"applied", "ignored", "rejected"},
		func(r Readings) int { return int(r.ExRule) },
		func(r *Readings, v int) { r.ExRule = ExRule(v) }},
}

func valueName(sw readingSwitch, v int) string {
	if v >= 0 && v < len(sw.values) {
		return sw.values[v]
	}
	return strconv.Itoa(v)
}

func (v AllDayOriginalStart) String() string { return valueName(readingSwitches[0], int(v)) }
func (v SeriesUpdate) String() string        { return valueName(readingSwitches[1], int(v)) }
func (v OffRule) String() string             { return valueName(readingSwitches[2], int(v)) }
func (v PropertyRepeats) String() string     { return valueName(readingSwitches[3], int(v)) }
func (v InstanceIDs) String() string         { return valueName(readingSwitches[4], int(v)) }
func (v Filters) String() string             { return valueName(readingSwitches[5], int(v)) }
func (v ExRule) String() string              { return valueName(readingSwitches[6], int(v)) }

// String names every switch and its value, e.g.
// "allday=honoured,update=kept,offrule=hidden,props=and,ids=derived,filters=exact,exrule=applied":
// usable as a subtest name, and read back by ParseReadings.
func (r Readings) String() string {
	parts := make([]string, len(readingSwitches))
	for i, sw := range readingSwitches {
		parts[i] = sw.name + "=" + valueName(sw, sw.get(r))
	}
	return strings.Join(parts, ",")
}

// ParseReadings reads what String writes. Switches left out keep their
// zero value, so "ids=opaque,filters=loose" is enough.
func ParseReadings(s string) (Readings, error) {
	var r Readings
	if strings.TrimSpace(s) == "" {
		return r, nil
	}
	seen := map[string]bool{}
	for part := range strings.SplitSeq(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return Readings{}, fmt.Errorf("gcalfake: readings %q: %q is not name=value", s, part)
		}
		i := switchIndex(name)
		if i < 0 {
			return Readings{}, fmt.Errorf("gcalfake: readings %q: unknown switch %q", s, name)
		}
		if seen[name] {
			return Readings{}, fmt.Errorf("gcalfake: readings %q: %s given twice", s, name)
		}
		seen[name] = true
		sw := readingSwitches[i]
		v := indexOf(sw.values, value)
		if v < 0 {
			return Readings{}, fmt.Errorf("gcalfake: readings %q: %s takes %s, not %q", s, name, strings.Join(sw.values, ", "), value)
		}
		sw.set(&r, v)
	}
	return r, nil
}

func switchIndex(name string) int {
	for i, sw := range readingSwitches {
		if sw.name == name {
			return i
		}
	}
	return -1
}

func indexOf(values []string, v string) int {
	for i, x := range values {
		if x == v {
			return i
		}
	}
	return -1
}

// AllReadings returns every combination of every switch's values (the
// full cross product, 432 of them), the zero value first.
func AllReadings() []Readings {
	out := []Readings{{}}
	for i := len(readingSwitches) - 1; i >= 0; i-- {
		sw := readingSwitches[i]
		next := make([]Readings, 0, len(out)*len(sw.values))
		for v := range sw.values {
			for _, r := range out {
				sw.set(&r, v)
				next = append(next, r)
			}
		}
		out = next
	}
	return out
}

// CoveringReadings returns a few combinations in which every value of
// every switch appears at least once, the zero value first: for tests too
// slow to run under AllReadings. Entry i takes value i (modulo the number
// of values) of every switch.
func CoveringReadings() []Readings {
	n := 0
	for _, sw := range readingSwitches {
		n = max(n, len(sw.values))
	}
	out := make([]Readings, n)
	for i := range out {
		for _, sw := range readingSwitches {
			sw.set(&out[i], i%len(sw.values))
		}
	}
	return out
}

// SetReadings replaces the readings. Stored events are kept as they are:
// exceptions keep the ids they were given, and are still found by the
// instance they replace.
func (s *Server) SetReadings(r Readings) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readings = r
}

// Readings returns the readings in force.
func (s *Server) Readings() Readings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readings
}
