package gcalfake

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	calendar "google.golang.org/api/calendar/v3"
)

// seriesUpdatedLocked applies Readings.SeriesUpdate to the exceptions of a
// recurring master after a write replaced old by updated.
func (s *Server) seriesUpdatedLocked(cal *calendarState, old, updated *calendar.Event) {
	if old.RecurringEventId != "" || len(old.Recurrence) == 0 {
		return
	}
	switch s.readings.SeriesUpdate {
	case ExceptionsDropped:
		if sameTiming(old, updated) {
			return
		}
		for id, st := range cal.events {
			if st.ev.RecurringEventId == old.Id {
				delete(cal.events, id)
			}
		}
	case ExceptionsPropagated:
		p := newPropagation(s.readings, old, updated)
		for _, st := range cal.events {
			if st.purged || st.ev.RecurringEventId != old.Id {
				continue
			}
			if p.apply(st.ev) {
				s.stamp(st.ev, false)
			}
		}
	}
}

// sameTiming reports whether two versions of a series have the same start,
// end and recurrence: ExceptionsDropped's trigger.
func sameTiming(a, b *calendar.Event) bool {
	return sameTime(a.Start, b.Start) && sameTime(a.End, b.End) && sameLines(a.Recurrence, b.Recurrence)
}

// sameTime compares the date, the instant and the time zone.
func sameTime(a, b *calendar.EventDateTime) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Date != b.Date || a.TimeZone != b.TimeZone {
		return false
	}
	if a.Date != "" {
		return true
	}
	ta, e1 := parseEventTime(a, "start")
	tb, e2 := parseEventTime(b, "start")
	if e1 != nil || e2 != nil {
		return a.DateTime == b.DateTime
	}
	return ta.Equal(tb)
}

// sameLines compares recurrences as sets of lines.
func sameLines(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// notPropagated are the fields ExceptionsPropagated never copies from the
// series (identity, bookkeeping, the instance's own link, and status), or
// copies by rules of their own (start, end, extendedProperties).
var notPropagated = map[string]bool{
	"id": true, "etag": true, "created": true, "updated": true, "htmlLink": true, "iCalUID": true, "kind": true,
	"recurrence": true, "recurringEventId": true, "originalStartTime": true, "status": true, "sequence": true,
	"start": true, "end": true, "extendedProperties": true,
}

// propagation carries a series update to its exceptions.
type propagation struct {
	old, updated         *calendar.Event
	oldFields, newFields map[string]json.RawMessage
	// oldSr and newSr are nil when that version is no series one can
	// expand; then times are not propagated.
	oldSr, newSr *series
}

func newPropagation(r Readings, old, updated *calendar.Event) *propagation {
	p := &propagation{old: old, updated: updated, oldFields: fields(old), newFields: fields(updated)}
	if sr, err := r.parseSeries(old); err == nil {
		p.oldSr = sr
	}
	if len(updated.Recurrence) > 0 {
		if sr, err := r.parseSeries(updated); err == nil {
			p.newSr = sr
		}
	}
	return p
}

func fields(ev *calendar.Event) map[string]json.RawMessage {
	b, _ := json.Marshal(ev)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	return m
}

// apply updates ex in place and reports whether it changed.
func (p *propagation) apply(ex *calendar.Event) bool {
	before, _ := json.Marshal(ex)
	exFields := fields(ex)
	for k := range p.keys() {
		if notPropagated[k] || !bytes.Equal(exFields[k], p.oldFields[k]) {
			continue
		}
		if v, ok := p.newFields[k]; ok {
			exFields[k] = v
		} else {
			delete(exFields, k)
		}
	}
	raw, _ := json.Marshal(exFields)
	var out calendar.Event
	if err := json.Unmarshal(raw, &out); err != nil {
		return false
	}
	out.Start, out.End = p.times(ex)
	out.ExtendedProperties = propagateProps(p.old.ExtendedProperties, p.updated.ExtendedProperties, ex.ExtendedProperties)
	*ex = out
	after, _ := json.Marshal(ex)
	return !bytes.Equal(before, after)
}

func (p *propagation) keys() map[string]bool {
	out := map[string]bool{}
	for k := range p.oldFields {
		out[k] = true
	}
	for k := range p.newFields {
		out[k] = true
	}
	return out
}

// times are ex's new start and end: the new series' instance at its
// original start when ex was not moved and that start is still an
// occurrence, else its own.
func (p *propagation) times(ex *calendar.Event) (start, end *calendar.EventDateTime) {
	start, end = ex.Start, ex.End
	if p.oldSr == nil || p.newSr == nil {
		return
	}
	orig, ok := p.oldSr.originalStart(ex)
	if !ok {
		return
	}
	was := p.oldSr.instance(p.old, orig, ex.Id)
	if !sameSpan(ex, was) {
		return // moved: its times are its own
	}
	norig, ok := p.newSr.originalStart(ex)
	if !ok || !p.newSr.has(norig) {
		return
	}
	now := p.newSr.instance(p.updated, norig, ex.Id)
	return now.Start, now.End
}

// sameSpan: both all-day or both timed, with the same start and end.
func sameSpan(a, b *calendar.Event) bool {
	as, ae, err1 := eventSpan(a)
	bs, be, err2 := eventSpan(b)
	return err1 == nil && err2 == nil && (a.Start.Date != "") == (b.Start.Date != "") && as.Equal(bs) && ae.Equal(be)
}

// propagateProps gives ex, key by key, the series' new value of every
// extended property it shared with the old series.
func propagateProps(old, updated, ex *calendar.EventExtendedProperties) *calendar.EventExtendedProperties {
	get := func(p *calendar.EventExtendedProperties, private bool) map[string]string {
		switch {
		case p == nil:
			return nil
		case private:
			return p.Private
		}
		return p.Shared
	}
	priv, c1 := propagateMap(get(old, true), get(updated, true), get(ex, true))
	shared, c2 := propagateMap(get(old, false), get(updated, false), get(ex, false))
	if !c1 && !c2 {
		return ex
	}
	out := &calendar.EventExtendedProperties{Private: priv, Shared: shared}
	if ex != nil {
		out.ForceSendFields, out.NullFields = ex.ForceSendFields, ex.NullFields
	}
	return out
}

func propagateMap(old, updated, ex map[string]string) (map[string]string, bool) {
	out := maps.Clone(ex)
	changed := false
	for _, m := range []map[string]string{old, updated} {
		for k := range m {
			ov, inOld := old[k]
			ev, inEx := ex[k]
			if inOld != inEx || ov != ev {
				continue
			}
			nv, inNew := updated[k]
			cur, inOut := out[k]
			switch {
			case inNew && (!inOut || cur != nv):
				if out == nil {
					out = map[string]string{}
				}
				out[k] = nv
				changed = true
			case !inNew && inOut:
				delete(out, k)
				changed = true
			}
		}
	}
	if len(out) == 0 {
		out = nil
	}
	return out, changed
}
