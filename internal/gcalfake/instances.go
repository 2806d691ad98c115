package gcalfake

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	calendar "google.golang.org/api/calendar/v3"
)

// view is a calendar as the readings in force present it. Its methods run
// under the server's lock.
type view struct {
	cal  *calendarState
	r    Readings
	seed uint64
}

func (s *Server) view(cal *calendarState) view {
	return view{cal: cal, r: s.readings, seed: s.seed}
}

// instanceRef is one instance of a live recurring master that has no
// exception stored yet.
type instanceRef struct {
	master *calendar.Event
	sr     *series
	orig   time.Time
}

// opaqueRef is what an opaque instance id stands for.
type opaqueRef struct {
	master, suffix string
}

// liveSeries returns the series of a master whose instances are shown:
// recurring, not deleted, expanded under the readings in force.
func (v view) liveSeries(st *stored) (*series, bool) {
	if st == nil || st.purged || st.ev.Status == "cancelled" || len(st.ev.Recurrence) == 0 || st.ev.RecurringEventId != "" {
		return nil, false
	}
	sr, err := v.r.parseSeries(st.ev)
	return sr, err == nil
}

// instanceID is the id the API gives master's instance at orig. An opaque
// id is remembered, so that the request that uses it finds the instance.
func (v view) instanceID(master *calendar.Event, sr *series, orig time.Time) string {
	suffix := sr.instanceSuffix(orig)
	if v.r.InstanceIDs != InstanceIDsOpaque {
		return master.Id + "_" + suffix
	}
	id := opaqueID(v.seed, master.Id, suffix)
	v.cal.opaque[id] = opaqueRef{master: master.Id, suffix: suffix}
	return id
}

// opaqueID hashes an instance to 26 base32hex characters that say nothing
// of its series or start.
func opaqueID(seed uint64, masterID, suffix string) string {
	h := fnv.New128a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(masterID))
	h.Write([]byte{0})
	h.Write([]byte(suffix))
	return strings.ToLower(base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(h.Sum(nil)))
}

// lookup finds what id addresses: a stored event (purged ones included), or
// else an instance of a live series with no exception stored. anyForm also
// takes the derived form under opaque ids: the inspection helpers name
// instances as a person points at them.
func (v view) lookup(id string, anyForm bool) (*stored, *instanceRef) {
	if st, ok := v.cal.events[id]; ok {
		return st, nil
	}
	in, ok := v.instanceOf(id)
	if !ok && anyForm {
		in, ok = v.derivedInstance(id)
	}
	if !ok {
		return nil, nil
	}
	// An exception stored under another id (the readings changed since).
	if st := v.exceptionAt(in.master.Id, in.orig); st != nil {
		return st, nil
	}
	return nil, &in
}

// instanceOf resolves an instance id as the API gives it.
func (v view) instanceOf(id string) (instanceRef, bool) {
	if v.r.InstanceIDs == InstanceIDsOpaque {
		ref, ok := v.cal.opaque[id]
		if !ok {
			return instanceRef{}, false
		}
		return v.instanceAt(ref.master, ref.suffix)
	}
	return v.derivedInstance(id)
}

// derivedInstance resolves "{masterId}_{suffix}".
func (v view) derivedInstance(id string) (instanceRef, bool) {
	i := strings.LastIndexByte(id, '_')
	if i <= 0 {
		return instanceRef{}, false
	}
	return v.instanceAt(id[:i], id[i+1:])
}

func (v view) instanceAt(masterID, suffix string) (instanceRef, bool) {
	st := v.cal.events[masterID]
	sr, ok := v.liveSeries(st)
	if !ok {
		return instanceRef{}, false
	}
	orig, ok := sr.parseSuffix(suffix)
	if !ok || sr.instanceSuffix(orig) != suffix || !sr.has(orig) {
		return instanceRef{}, false
	}
	return instanceRef{master: st.ev, sr: sr, orig: orig}, true
}

// exceptionAt finds the stored exception of masterID at orig.
func (v view) exceptionAt(masterID string, orig time.Time) *stored {
	for _, st := range v.cal.events {
		if st.ev.RecurringEventId != masterID {
			continue
		}
		if k, ok := origKey(st.ev); ok && k == orig.UnixNano() {
			return st
		}
	}
	return nil
}

// instance is the unmodified instance of master at orig.
func (v view) instance(master *calendar.Event, sr *series, orig time.Time) *calendar.Event {
	return sr.instance(master, orig, v.instanceID(master, sr, orig))
}

func (v view) virtual(in *instanceRef) *calendar.Event { return v.instance(in.master, in.sr, in.orig) }

// materialize returns the instance as an exception to be stored by the
// write that makes it one.
func (v view) materialize(in *instanceRef) *stored {
	return &stored{ev: cloneEvent(v.virtual(in))}
}

// origKey is an exception's original start as a map key: the instant, or
// for an all-day one midnight UTC of its date, as series.occurrences
// yields them.
func origKey(ev *calendar.Event) (int64, bool) {
	if ev.OriginalStartTime == nil {
		return 0, false
	}
	t, err := parseEventTime(ev.OriginalStartTime, "originalStart")
	if err != nil {
		return 0, false
	}
	return t.UnixNano(), true
}

// exceptionsOf indexes the stored exceptions of every master by original
// start.
func exceptionsOf(cal *calendarState) map[string]map[int64]*calendar.Event {
	out := map[string]map[int64]*calendar.Event{}
	for _, st := range cal.events {
		if st.purged || st.ev.RecurringEventId == "" {
			continue
		}
		k, ok := origKey(st.ev)
		if !ok {
			continue
		}
		m := out[st.ev.RecurringEventId]
		if m == nil {
			m = map[int64]*calendar.Event{}
			out[st.ev.RecurringEventId] = m
		}
		m[k] = st.ev
	}
	return out
}

// expand calls fn with every instance of a live master in order of
// original start (exceptions in place of the instances they replace,
// cancelled ones included, and under OffRuleKept the exceptions left off
// the rule in the order of their original starts) until fn returns false
// or the series ends.
func (v view) expand(master *calendar.Event, sr *series, exceptions map[int64]*calendar.Event, fn func(orig time.Time, ev *calendar.Event) bool) {
	var off []offRuleException
	if v.r.OffRule == OffRuleKept {
		off = offRuleExceptions(sr, exceptions)
	}
	next := sr.occurrences()
	for {
		orig, ok := next()
		for len(off) > 0 && (!ok || off[0].orig.Before(orig)) {
			if !fn(off[0].orig, off[0].ev) {
				return
			}
			off = off[1:]
		}
		if !ok {
			return
		}
		ev := exceptions[orig.UnixNano()]
		if ev == nil {
			ev = v.instance(master, sr, orig)
		}
		if !fn(orig, ev) {
			return
		}
	}
}

type offRuleException struct {
	orig time.Time
	ev   *calendar.Event
}

// offRuleExceptions lists the exceptions whose original start is no
// occurrence of the series, in order of original start.
func offRuleExceptions(sr *series, exceptions map[int64]*calendar.Event) []offRuleException {
	var out []offRuleException
	for _, ev := range exceptions {
		if orig, ok := sr.originalStart(ev); ok && !sr.has(orig) {
			out = append(out, offRuleException{orig, ev})
		}
	}
	slices.SortFunc(out, func(a, b offRuleException) int { return a.orig.Compare(b.orig) })
	return out
}

// maxMove is how far before its original start an exception of master
// was moved, so that an expansion bounded by timeMax still finds it.
func maxMove(sr *series, exceptions map[int64]*calendar.Event) time.Duration {
	var d time.Duration
	for _, ev := range exceptions {
		orig, ok := sr.originalStart(ev)
		start, _, err := eventSpan(ev)
		if ok && err == nil {
			d = max(d, orig.Sub(start))
		}
	}
	return d
}

// visibleException reports whether a stored exception is shown: its
// master is live and still has an instance at its original start, or,
// under OffRuleKept, is still a live series.
func (v view) visibleException(ev *calendar.Event) bool {
	sr, ok := v.liveSeries(v.cal.events[ev.RecurringEventId])
	if !ok {
		return false
	}
	if v.r.OffRule == OffRuleKept {
		return true
	}
	orig, ok := sr.originalStart(ev)
	return ok && sr.has(orig)
}

// overlaps reports whether [start, end) meets [lo, hi) (zero bounds are
// open; a zero-length event meets the range it starts in).
func overlaps(start, end, lo, hi time.Time) bool {
	if !hi.IsZero() && !start.Before(hi) {
		return false
	}
	if lo.IsZero() {
		return true
	}
	return end.After(lo) || (end.Equal(start) && !start.Before(lo))
}

// timeRange reads timeMin and timeMax.
func timeRange(q map[string][]string) (lo, hi time.Time, apiErr *APIError) {
	for name, dst := range map[string]*time.Time{"timeMin": &lo, "timeMax": &hi} {
		if v := first(q[name]); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return lo, hi, errBadRequest("Bad Request")
			}
			*dst = t
		}
	}
	return lo, hi, nil
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// paging reads maxResults and pageToken (an offset).
func paging(q map[string][]string) (limit, offset int, apiErr *APIError) {
	limit = 250
	if v := first(q["maxResults"]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, 0, errInvalid("Invalid value for maxResults.")
		}
		limit = min(n, 2500)
	}
	if tok := first(q["pageToken"]); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil {
			return 0, 0, errInvalid("Invalid page token.")
		}
		offset, err = strconv.Atoi(string(b))
		if err != nil || offset < 0 {
			return 0, 0, errInvalid("Invalid page token.")
		}
	}
	return limit, offset, nil
}

func pageToken(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(offset)))
}

// listInstances serves events.instances: the instances of a recurring
// event, exceptions in place, filtered by originalStart or a time range,
// cancelled ones only with showDeleted, paged.
func (s *Server) listInstances(r *http.Request, cal *calendarState) (any, *APIError) {
	st, ok := cal.events[r.PathValue("id")]
	if !ok || st.purged {
		return nil, errNotFound()
	}
	if st.ev.Status == "cancelled" {
		return nil, errDeleted()
	}
	v := s.view(cal)
	q := r.URL.Query()
	lo, hi, apiErr := timeRange(q)
	if apiErr != nil {
		return nil, apiErr
	}
	limit, offset, apiErr := paging(q)
	if apiErr != nil {
		return nil, apiErr
	}
	showDeleted := q.Get("showDeleted") == "true"
	out := &calendar.Events{Kind: "calendar#events", Summary: cal.summary, TimeZone: cal.timeZone,
		Updated: s.now().UTC().Format(time.RFC3339Nano), Items: []*calendar.Event{}}
	sr, ok := v.liveSeries(st)
	if !ok {
		return out, nil
	}
	var target time.Time
	if raw := q.Get("originalStart"); raw != "" {
		if target, apiErr = v.originalStartFilter(sr, raw); apiErr != nil {
			return nil, apiErr
		}
	}
	exceptions := exceptionsOf(cal)[st.ev.Id]
	stopAt := time.Time{}
	if !hi.IsZero() {
		stopAt = hi.Add(maxMove(sr, exceptions))
	}
	loose := v.looseFilter()
	matched, tail := 0, 0
	more := false
	v.expand(st.ev, sr, exceptions, func(orig time.Time, ev *calendar.Event) bool {
		past := !target.IsZero() && orig.After(target) || !stopAt.IsZero() && !orig.Before(stopAt)
		if past {
			// Nothing further matches; a loose filter may still let a
			// few more through.
			if tail++; loose == nil || tail > looseTail || loose.full() {
				return false
			}
		}
		if ev.Status == "cancelled" && !showDeleted {
			return true
		}
		match := !past && (target.IsZero() || orig.Equal(target)) && spanOverlaps(ev, lo, hi)
		if !match && (loose == nil || !loose.take(ev.Id)) {
			return true
		}
		matched++
		switch {
		case matched <= offset:
		case len(out.Items) < limit:
			out.Items = append(out.Items, cloneEvent(ev))
		default:
			more = true
			return false
		}
		return true
	})
	if more {
		out.NextPageToken = pageToken(offset + limit)
	}
	return out, nil
}

// originalStartFilter reads events.instances' originalStart: the instant
// (or, for an all-day series, the date) to list, or zero when the
// readings ignore it.
func (v view) originalStartFilter(sr *series, raw string) (time.Time, *APIError) {
	if _, err := time.Parse("2006-01-02", raw); err == nil {
		switch v.r.AllDayOriginalStart {
		case OriginalStartIgnored:
			return time.Time{}, nil
		case OriginalStartRejected:
			return time.Time{}, errInvalidParameter("originalStart")
		}
	}
	t, err := sr.parseOriginalStart(raw)
	if err != nil {
		return time.Time{}, errBadRequest("Bad Request")
	}
	return t, nil
}

// spanOverlaps reports whether ev meets [lo, hi); an event whose times
// cannot be read does not.
func spanOverlaps(ev *calendar.Event, lo, hi time.Time) bool {
	start, end, err := eventSpan(ev)
	return err == nil && overlaps(start, end, lo, hi)
}
