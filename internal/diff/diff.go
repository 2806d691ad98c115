// Package diff computes what must change in Google for the calendar to
// match the feed, with pure functions only: Shape (the feed as Google holds
// it), Compute (desired events against persisted mappings: a plan of
// creates, updates and deletes), Guard (the plan's limits: the mass-delete
// guard), Reconcile (Google's owned events against the mappings) and
// DetectUnstableUIDs.
package diff

import (
	"cmp"
	"slices"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// Kind is what an operation does.
type Kind int

// Kinds of operation.
const (
	Create Kind = iota + 1
	Update
	Delete
)

func (k Kind) String() string {
	switch k {
	case Create:
		return "create"
	case Update:
		return "update"
	case Delete:
		return "delete"
	}
	return "unknown"
}

// Op is one write.
type Op struct {
	Kind Kind
	Key  calsyncd.Key
	// Event is the desired event (Create and Update).
	Event *feed.Event
	// Mapping is what we hold for the event (Update and Delete).
	Mapping *calsyncd.Mapping
	// Parent is the desired series of an instance exception (Key.Kind()
	// calsyncd.Instance), and ParentMapping what we hold for it, if we
	// wrote it before.
	Parent        *feed.Event
	ParentMapping *calsyncd.Mapping
	// Revert marks the Update of an instance whose override left the
	// feed: the instance is written back to its series' content.
	Revert bool
	// Forget marks the Delete of an instance exception whose series went
	// (taking it along) or no longer has it: only its mapping goes.
	Forget bool
	// Exceptions, on the Update of a series, are its mapped exceptions the
	// plan does not write otherwise (Kind Update, with their desired event
	// and mapping): what Google does to a series' exceptions when the
	// series is written is undocumented (kept, rewritten from the series,
	// dropped), so the writer checks them after the series' write and
	// repairs those that no longer show what the feed means.
	Exceptions []Op
	// Forgotten, on the Update of a series, are its exceptions this plan
	// forgets because the series no longer has their occurrence: Google may
	// still show such an exception, so the writer deletes those it still
	// lists.
	Forgotten []Forgotten
}

// Forgotten is an exception's mapping and its original start.
type Forgotten struct {
	Mapping  calsyncd.Mapping
	Original feed.Time
}

// Plan is every write needed, in a safe order: masters are created before
// their overridden instances, and instances deleted before their masters.
type Plan struct {
	Creates []Op
	Updates []Op
	Deletes []Op
	// Rekeys are events whose key changed while their content did not (a
	// feed that mints new UIDs, or a switch to content identity): the
	// mapping moves to the new key and Google is not written at all.
	Rekeys    []Rekey
	Unchanged int
	// Reverts counts the Updates that write an instance back to its
	// series (their override left the feed).
	Reverts int
	// StillRejected counts events Google refused before whose content has not
	// changed since; they are not sent again.
	StillRejected int
}

// Rekey moves a mapping to a new key.
type Rekey struct {
	From calsyncd.Mapping
	To   calsyncd.Key
}

// Writes is the number of writes in the plan.
func (p Plan) Writes() int { return len(p.Creates) + len(p.Updates) + len(p.Deletes) }

// Ops returns every op in the order to write them: creates and updates of
// single events and series, then those of instance exceptions (an
// exception is found in its series as Google holds it after the series'
// own write), then deletes.
func (p Plan) Ops() []Op {
	out := make([]Op, 0, p.Writes())
	for _, instances := range []bool{false, true} {
		for _, ops := range [][]Op{p.Creates, p.Updates} {
			for _, op := range ops {
				if (op.Key.Kind() == calsyncd.Instance) == instances {
					out = append(out, op)
				}
			}
		}
	}
	return append(out, p.Deletes...)
}

// Compute plans the writes that make Google match desired, the events as
// Shape returns them. Events with the same key as an earlier one are
// ignored (the feed package resolves duplicates before this). An event
// whose content hash matches a rejection is not sent again. A cancelled
// event that is not an instance exception (STATUS:CANCELLED on a single
// event or a whole series) is not wanted: it is never created, and deleted
// if we wrote it before; a cancelled instance is written, because Google
// models it as a cancelled exception.
//
// An instance exception whose override left the feed is reverted: updated
// back to its series' content at its original start, and kept mapped so
// that it follows the series from then on (Google keeps exceptions as
// independent copies). When its series goes, or no longer has that
// occurrence, its mapping is only forgotten.
func Compute(desired []feed.Event, mapped []calsyncd.Mapping, rejected []calsyncd.Rejection) Plan {
	c := newComputation(desired, mapped, rejected)
	for i := range desired {
		c.wantEvent(&desired[i])
	}
	for i := range mapped {
		c.settleMapping(&mapped[i])
	}
	c.p.pairRekeys()
	c.p.attachExceptions(c.kept)
	c.p.sortOps()
	return c.p
}

// computation is Compute's work: the feed's events and the calendar's
// mappings by key, and the plan as it is built.
type computation struct {
	have    map[calsyncd.Key]*calsyncd.Mapping
	refused map[calsyncd.Key]string
	byKey   map[calsyncd.Key]*feed.Event
	// want are the keys the plan has decided; kept the unchanged instance
	// exceptions, checked after a write of their series.
	want map[calsyncd.Key]bool
	kept []Op
	p    Plan
}

func newComputation(desired []feed.Event, mapped []calsyncd.Mapping, rejected []calsyncd.Rejection) *computation {
	c := &computation{
		have:    make(map[calsyncd.Key]*calsyncd.Mapping, len(mapped)),
		refused: make(map[calsyncd.Key]string, len(rejected)),
		byKey:   make(map[calsyncd.Key]*feed.Event, len(desired)),
		want:    make(map[calsyncd.Key]bool, len(desired)),
	}
	for i := range mapped {
		c.have[mapped[i].Key] = &mapped[i]
	}
	for _, r := range rejected {
		c.refused[r.Key] = r.Hash
	}
	for i := range desired {
		if k := desired[i].Key(); c.byKey[k] == nil {
			c.byKey[k] = &desired[i]
		}
	}
	return c
}

// wantEvent plans a feed event: unchanged, still rejected, an update or
// a create. A cancelled master or single event is not wanted (its
// mapping, if any, is deleted); the first of duplicate keys wins.
func (c *computation) wantEvent(ev *feed.Event) {
	k := ev.Key()
	if ev.Status == feed.StatusCancelled && k.Kind() != calsyncd.Instance {
		return
	}
	if c.want[k] {
		return
	}
	c.want[k] = true
	m, ok := c.have[k]
	op := Op{Key: k, Event: ev, Mapping: m}
	if pk, isInstance := k.Parent(); isInstance {
		op.Parent, op.ParentMapping = c.byKey[pk], c.have[pk]
	}
	switch {
	case ok && m.Hash == ev.Hash:
		c.p.Unchanged++
		if op.Parent != nil {
			op.Kind = Update
			c.kept = append(c.kept, op)
		}
	case c.refused[k] != "" && c.refused[k] == ev.Hash:
		c.p.StillRejected++
	case ok:
		op.Kind = Update
		c.p.Updates = append(c.p.Updates, op)
	default:
		op.Kind, op.Mapping = Create, nil
		c.p.Creates = append(c.p.Creates, op)
	}
}

// settleMapping plans a mapping no feed event wants: the revert of an
// instance the feed no longer overrides to its series' occurrence, or a
// delete.
func (c *computation) settleMapping(m *calsyncd.Mapping) {
	if c.want[m.Key] {
		return
	}
	rev := revertOf(m.Key, c.byKey)
	if rev == nil {
		c.p.Deletes = append(c.p.Deletes, Op{Kind: Delete, Key: m.Key, Mapping: m, Forget: m.Key.Kind() == calsyncd.Instance})
		return
	}
	c.want[m.Key] = true
	pk, _ := m.Key.Parent()
	op := Op{Kind: Update, Key: m.Key, Event: rev, Mapping: m, Parent: c.byKey[pk], ParentMapping: c.have[pk], Revert: true}
	if m.Hash == rev.Hash {
		c.p.Unchanged++
		c.kept = append(c.kept, op)
		return
	}
	c.p.Updates = append(c.p.Updates, op)
	c.p.Reverts++
}

// sortOps orders the writes masters first, deletes the other way round.
func (p *Plan) sortOps() {
	mastersFirst := func(a, b Op) int {
		return cmp.Or(
			cmp.Compare(kindRank(a.Key), kindRank(b.Key)),
			cmp.Compare(a.Key.UID, b.Key.UID),
			cmp.Compare(a.Key.RecurrenceID, b.Key.RecurrenceID),
		)
	}
	slices.SortFunc(p.Creates, mastersFirst)
	slices.SortFunc(p.Updates, mastersFirst)
	slices.SortFunc(p.Deletes, func(a, b Op) int { return -mastersFirst(a, b) })
}

// attachExceptions gives each series update the exceptions it must check
// afterwards: the unchanged ones, and those forgotten for being off its
// rule.
func (p *Plan) attachExceptions(kept []Op) {
	series := map[calsyncd.Key]int{}
	for i, op := range p.Updates {
		if op.Key.Kind() != calsyncd.Instance && op.Event != nil && op.Event.IsRecurring() {
			series[op.Key] = i
		}
	}
	if len(series) == 0 {
		return
	}
	for _, op := range kept {
		pk, _ := op.Key.Parent()
		if i, ok := series[pk]; ok {
			p.Updates[i].Exceptions = append(p.Updates[i].Exceptions, op)
		}
	}
	for _, op := range p.Deletes {
		if !op.Forget {
			continue
		}
		pk, _ := op.Key.Parent()
		i, ok := series[pk]
		if !ok {
			continue
		}
		parent := p.Updates[i].Event
		if t, ok := recurrenceStart(op.Key, parent); ok {
			p.Updates[i].Forgotten = append(p.Updates[i].Forgotten, Forgotten{Mapping: *op.Mapping, Original: instanceTime(parent.Start, t)})
		}
	}
}

// kindRank orders series before the exceptions that need them.
func kindRank(k calsyncd.Key) int {
	switch k.Kind() {
	case calsyncd.Top:
		return 0
	case calsyncd.Split:
		return 1
	}
	return 2
}

// revertOf is the event an instance exception returns to when its
// override left the feed: its series' content at its original start. It is
// nil when the key is no instance, or its series is not desired, not
// recurring, or has no occurrence there any more.
func revertOf(k calsyncd.Key, desired map[calsyncd.Key]*feed.Event) *feed.Event {
	pk, ok := k.Parent()
	if !ok {
		return nil
	}
	parent := desired[pk]
	if parent == nil || !parent.IsRecurring() || parent.Status == feed.StatusCancelled {
		return nil
	}
	series := parent.Series
	if series == nil {
		return nil
	}
	t, ok := recurrenceStart(k, parent)
	if !ok || !series.Has(t) {
		return nil
	}
	ev := *parent
	ev.UID, ev.RecurrenceID = k.UID, k.RecurrenceID
	ev.SetSeries(nil)
	ev.ThisAndFuture = false
	ev.Start = instanceTime(parent.Start, t)
	ev.Original = ev.Start
	ev.End = ev.Start
	ev.End.T = ev.Start.T.Add(parent.End.T.Sub(parent.Start.T))
	ev.Hash = ev.ComputeHash()
	return &ev
}

// recurrenceStart is the original start an instance key names in its
// series. The key comes from the store (revertOf, the exceptions a series
// update forgets): its recurrence id is all there is.
func recurrenceStart(k calsyncd.Key, parent *feed.Event) (time.Time, bool) {
	return feed.ParseRecurrenceID(k.Start(), parent.Start)
}

// pairRekeys turns a create and a delete of identical content (same hash,
// same recurrence id) into a rekey, pairing them in key order. An instance
// exception lives in its series in Google: it is rekeyed only along with
// its series (the old exception's series rekeyed to the new one's), never
// into a series written anew, which has no such exception yet.
func (p *Plan) pairRekeys() {
	if len(p.Creates) == 0 || len(p.Deletes) == 0 {
		return
	}
	gone := map[rekeyTwin][]int{}
	for i, op := range p.Deletes {
		t := rekeyTwin{op.Mapping.Hash, op.Key.RecurrenceID}
		gone[t] = append(gone[t], i)
	}
	paired := map[int]bool{}
	pairedCreate := map[int]bool{}
	// rekeyed maps a series' new key to its old one.
	rekeyed := map[calsyncd.Key]calsyncd.Key{}
	for _, instances := range []bool{false, true} {
		for ci, op := range p.Creates {
			if (op.Key.Kind() == calsyncd.Instance) != instances {
				continue
			}
			t := rekeyTwin{op.Event.Hash, op.Key.RecurrenceID}
			idx := gone[t]
			pick := p.pickTwin(op.Key, idx, rekeyed)
			if pick < 0 {
				continue
			}
			di := idx[pick]
			gone[t] = append(idx[:pick:pick], idx[pick+1:]...)
			paired[di] = true
			pairedCreate[ci] = true
			p.Rekeys = append(p.Rekeys, Rekey{From: *p.Deletes[di].Mapping, To: op.Key})
			p.Unchanged++
			if !instances {
				rekeyed[op.Key] = p.Deletes[di].Key
			}
		}
	}
	p.Creates, p.Deletes = withoutOps(p.Creates, pairedCreate), withoutOps(p.Deletes, paired)
}

// rekeyTwin is what a create and a delete share when they are one event
// under a new key: the content hash and the recurrence id.
type rekeyTwin struct {
	hash, rid string
}

// pickTwin picks among the deletes idx (twins of the create of key) the
// one it renames, -1 for none: the first for a master or single event; for
// an instance, the one whose series was renamed to key's (rekeyed maps a
// series' new key to its old one).
func (p *Plan) pickTwin(key calsyncd.Key, idx []int, rekeyed map[calsyncd.Key]calsyncd.Key) int {
	np, isInstance := key.Parent()
	for j, di := range idx {
		if !isInstance {
			return j
		}
		op2, _ := p.Deletes[di].Key.Parent()
		if old, ok := rekeyed[np]; ok && old == op2 {
			return j
		}
	}
	return -1
}

// withoutOps returns a new slice of ops without the indexes in drop.
func withoutOps(ops []Op, drop map[int]bool) []Op {
	kept := ops[:0:0]
	for i, op := range ops {
		if !drop[i] {
			kept = append(kept, op)
		}
	}
	return kept
}
