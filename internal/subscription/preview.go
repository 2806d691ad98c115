package subscription

import (
	"context"
	"errors"
	"fmt"
	"slices"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/render"
)

// Preview is what one sync of a subscription would do, as a dry-run
// computes it: the pass up to its plan and the guard's verdict, with what
// the filters excluded. Nothing is written, to Google or to the store.
type Preview struct {
	Subscription string
	// Creates, Updates and Deletes are the writes the sync would make;
	// Held the deletes the mass-delete guard would hold back instead.
	Creates, Updates, Deletes, Held []Change
	// HeldWhy says why the guard holds them and what releases them ("":
	// none held).
	HeldWhy string
	// KeptDeletes and KeptUpdates are the writes mirroring would make
	// that the subscription's write policy keeps from Google (deletes:
	// never, updates: never).
	KeptDeletes, KeptUpdates []Change
	// Excluded are the feed's events the filters leave out (a series
	// counts once; an override an exclude cancels counts too).
	Excluded []Change
	// Unchanged events need no write; Rekeyed mappings move to a new key
	// without one; Forgotten mappings go with their series (no write).
	Unchanged, Rekeyed, Forgotten int
	// Reconcile is what a due reconcile would repair (nil when none is
	// due); ReconcileSkipped why Google could not be listed.
	Reconcile        *Repairs
	ReconcileSkipped error
	// Vacate are the calendars the subscription moved away from, with how
	// many of its events the sync would delete there once the new calendar
	// holds the feed.
	Vacate []Vacating
	// Warnings are the feed's.
	Warnings []feed.Warning
	// Err is why the sync would fail before its plan (the feed cannot be
	// fetched or read, the account cannot be used).
	Err error
}

// Vacating is one calendar left behind, as a dry-run sees it.
type Vacating struct {
	At calsyncd.Location
	// Deletes are the events of ours the sync would delete there, Held
	// those the guard would keep (no copy in the new calendar); Err why
	// they could not be listed.
	Deletes int
	Held    int
	Err     error
}

// Repairs are what reconcile finds.
type Repairs struct {
	// Adopted events are ours in Google without a mapping (a lost
	// database); Restoring ones were deleted by hand and are written
	// again; Duplicates are extra copies deleted; Repairing ones a
	// person edited in Google are written back to the feed's version
	// (among the updates).
	Adopted, Restoring, Duplicates, Repairing int
}

// Change is one event in a preview.
type Change struct {
	Key calsyncd.Key
	// Summary is the title Google would show (for an excluded event, the
	// feed's); "" when unknown (an event that left the feed).
	Summary string
	// Start is when it starts; zero when unknown.
	Start feed.Time
	// Fields are the fields an update changes (feed.ShownFields' names);
	// nil when unknown (the mapping predates field digests).
	Fields []string
	// Reason says why a delete or an unusual update is planned.
	Reason string
	// Filter says which filters left an excluded event out (and a delete
	// of one they now exclude); nil for others.
	Filter *Filtered
	// Look is what a create or an update writes of the event's
	// presentation where it differs from Google's defaults (zero: none).
	Look Look
	// Recurrence is a series' RRULE, RDATE and EXDATE lines as Google
	// takes them (nil for a single event or an instance).
	Recurrence []string
	// TitleFrom says where a delete's Summary and Start came from when the
	// feed no longer has the event: TitleWritten when a kept run recorded
	// what it was last written with, "" otherwise.
	TitleFrom string
}

// TitleWritten: a delete's title and start are the ones its event was
// last written with, as the store's record of runs has them.
const TitleWritten = "written"

// Filtered is why the filters left an event out, in the configuration's
// words and rule by rule.
type Filtered struct {
	// Text is the reason as a person reads it: `filters[1]
	// exclude.summary matched "^On-call"` or `no include matched
	// (filters[0] include.categories "^DE$")`.
	Text string
	// Match is "exclude" (Rules holds the exclude that matched) or
	// "no_include" (Rules holds the includes, none of which matched).
	Match string
	Rules []FilterRule
}

// FilterRule is one filter a Filtered names.
type FilterRule struct {
	// Key is its configuration key: "filters[1]", or
	// "defaults.filters[1]" for a subscription taking the defaults'.
	Key            string
	Index          int
	Kind           string // include or exclude
	Field, Pattern string
}

// Look is an event's presentation beyond its text, where it differs from
// what Google gives an event that does not say: the calendar's colour,
// default visibility, busy, the calendar's reminders.
type Look struct {
	// Color is the colour's name (banana); "" for the calendar's.
	Color string
	// Visibility is public, private or confidential; "" for Google's
	// default.
	Visibility string
	// Free: the event shows as free (transparent).
	Free bool
	// Reminders are the reminders written when they are not the
	// calendar's default ones (no overrides and not UseDefault: none at
	// all); nil when the calendar's defaults, or a person's own, stand.
	Reminders *feed.Reminders
}

// IsZero reports whether the look is Google's defaults throughout.
func (l Look) IsZero() bool {
	return l.Color == "" && l.Visibility == "" && !l.Free && l.Reminders == nil
}

// lookOf is what ev writes of its presentation beyond Google's defaults.
func lookOf(ev *feed.Event) Look {
	var l Look
	if ev.Status == feed.StatusCancelled {
		return l
	}
	if v := ev.Visibility; v != "" && v != feed.VisibilityDefault {
		l.Visibility = v
	}
	l.Free = ev.Transparency == feed.TransparencyTransparent
	if st := ev.Style; st != nil {
		l.Color = render.ColorName(st.ColorID)
		if r := st.Reminders; r != nil && (!r.UseDefault || len(r.Overrides) > 0) {
			l.Reminders = r
		}
	}
	return l
}

// Reasons for a delete or an update.
const (
	ReasonFiltered = "excluded by a filter"
	ReasonLeft     = "no longer in the feed"
	ReasonRevert   = "its override left the feed: written back to its series"
	// ReasonAdopted is a held delete of an event this run found in
	// Google without ever having written it.
	ReasonAdopted = "found in Google, never written by this database: only --allow-deletes deletes it"
)

// StateLookup is a Store that can read a subscription's state without
// creating it (*store.Store).
type StateLookup interface {
	LookupSubscription(ctx context.Context, id string) (calsyncd.SubscriptionState, bool, error)
}

// ErrStoreWrites: the store cannot be read without writing to it.
var ErrStoreWrites = errors.New("subscription: a dry-run needs a store it can read without writing (LookupSubscription)")

// Preview runs a dry-run of one subscription: fetch (in full), parse,
// render, the account, reconcile when due (reading Google's list of our
// events, as the sync would), shape, plan and guard, and returns the plan.
// It writes nothing to Google or to the store and takes no lock or lease,
// so it runs beside a daemon. opts.AllowDeletes and opts.Reconcile preview
// a sync with those options.
func (r *Runner) Preview(ctx context.Context, sub config.Subscription, opts Options) (Preview, error) {
	lookup, ok := r.Store.(StateLookup)
	if !ok {
		return Preview{Subscription: sub.ID}, ErrStoreWrites
	}
	st, found, err := lookup.LookupSubscription(ctx, sub.ID)
	if err != nil {
		return Preview{Subscription: sub.ID}, err
	}
	if !found {
		st = calsyncd.SubscriptionState{ID: sub.ID, Calendar: sub.Calendar, Account: sub.AccountName(), State: calsyncd.StateActive}
	}
	opts.Scheduled, opts.Started = false, nil
	p := r.run(ctx, r.decide(r.newBegun(sub, opts, st, true)))
	pv := p.preview()
	if pv.Err == nil {
		pv.Vacate = r.previewVacate(ctx, p)
		r.titleDeletes(ctx, &pv)
	}
	return pv, nil
}

// WrittenTitles is a Store that remembers the title and start it last
// wrote each event with (*store.Store, from its record of runs).
type WrittenTitles interface {
	WrittenAs(ctx context.Context, subscriptionID string, keys []calsyncd.Key) (map[calsyncd.Key]calsyncd.RunChange, error)
}

// titleDeletes names the deletes of events the feed no longer has by the
// title and start they were last written with, where the store still has
// them. Not finding them is no failure: such a delete stays known by its
// key.
func (r *Runner) titleDeletes(ctx context.Context, pv *Preview) {
	wt, ok := r.Store.(WrittenTitles)
	if !ok {
		return
	}
	var keys []calsyncd.Key
	for _, cs := range [][]Change{pv.Deletes, pv.Held} {
		for _, c := range cs {
			if c.Summary == "" {
				keys = append(keys, c.Key)
			}
		}
	}
	if len(keys) == 0 {
		return
	}
	written, err := wt.WrittenAs(ctx, pv.Subscription, keys)
	if err != nil {
		return
	}
	for _, cs := range [][]Change{pv.Deletes, pv.Held} {
		for i := range cs {
			w, ok := written[cs[i].Key]
			if !ok || cs[i].Summary != "" || w.Title == "" {
				continue
			}
			cs[i].Summary, cs[i].TitleFrom = w.Title, TitleWritten
			if !w.Start.IsZero() {
				cs[i].Start = feed.Time{T: w.Start.UTC(), AllDay: w.AllDay}
			}
		}
		sortChanges(cs)
	}
}

// previewVacate lists, read-only, what vacate would delete from each
// calendar left behind (a dry-run lets go of no mapping, so the calendar
// being moved away from is one of them).
func (r *Runner) previewVacate(ctx context.Context, p pass) []Vacating {
	left := p.leftBehind()
	if from := p.moved.from; from != nil && !slices.Contains(left, *from) {
		left = append(left, *from)
	}
	var out []Vacating
	for _, loc := range left {
		v := Vacating{At: loc}
		if same, err := r.sameCalendar(ctx, p, loc); err != nil || same {
			if err != nil {
				v.Err = err
				out = append(out, v)
			}
			continue
		}
		w, err := r.Writer(loc.Account)
		if err == nil {
			var owned []diff.Owned
			if owned, err = w.ListOwned(ctx, loc.Calendar, p.sub.ID); err == nil {
				deletes, held := p.vacatePlan(owned, loc)
				v.Deletes, v.Held = len(deletes), len(held)
			}
		}
		v.Err = err
		out = append(out, v)
	}
	return out
}

// preview is the pass's plan as a Preview.
func (p pass) preview() Preview {
	pv := Preview{Subscription: p.sub.ID}
	if p.parsed.cal != nil {
		pv.Warnings = p.parsed.cal.Warnings
	}
	if p.end != nil {
		pv.Err = p.end.err
		if pv.Err == nil {
			pv.Err = errors.New("the sync would stop before its plan (" + string(p.end.outcome) + ")")
		}
		return pv
	}
	pl := p.firstPlan()
	if rp := p.repaired; rp != nil {
		if rp.skipped != nil {
			pv.ReconcileSkipped = rp.skipped
		} else {
			pv.Reconcile = &Repairs{Adopted: rp.adopted, Restoring: rp.refreshed, Duplicates: rp.duplicates, Repairing: len(pl.drifted)}
		}
	}
	excluded := p.excludedByKey()
	p.previewWrites(&pv, pl, excluded)
	p.previewHeld(&pv, pl, excluded)
	for i := range p.rendered.Excluded {
		ev := &p.rendered.Excluded[i]
		pv.Excluded = append(pv.Excluded, Change{Key: ev.Key(), Summary: ev.Summary, Start: ev.Start, Reason: ReasonFiltered,
			Filter: p.exclusion(i), Recurrence: ev.Recurrence})
	}
	for _, op := range pl.kept.Deletes {
		pv.KeptDeletes = append(pv.KeptDeletes, deletedChange(op, excluded))
	}
	for _, op := range pl.kept.Updates {
		c := eventChange(op)
		c.Fields = changedFields(op)
		pv.KeptUpdates = append(pv.KeptUpdates, c)
	}
	pv.Unchanged, pv.Rekeyed = pl.plan.Unchanged, len(pl.plan.Rekeys)
	pv.HeldWhy = p.heldWhy()
	for _, cs := range [][]Change{pv.Creates, pv.Updates, pv.Deletes, pv.Held, pv.Excluded, pv.KeptDeletes, pv.KeptUpdates} {
		sortChanges(cs)
	}
	return pv
}

// previewWrites are the plan's creates, updates and deletes.
func (p pass) previewWrites(pv *Preview, pl *planned, excluded map[calsyncd.Key]excludedEvent) {
	for _, op := range pl.plan.Creates {
		c := eventChange(op)
		if op.Event != nil {
			c.Look = lookOf(op.Event)
		}
		pv.Creates = append(pv.Creates, c)
	}
	for _, op := range pl.plan.Updates {
		c := eventChange(op)
		if op.Event != nil {
			c.Look = lookOf(op.Event)
		}
		c.Fields = changedFields(op)
		if op.Revert {
			c.Reason = ReasonRevert
		}
		pv.Updates = append(pv.Updates, c)
	}
	for _, op := range pl.plan.Deletes {
		if op.Forget {
			pv.Forgotten++
			continue
		}
		pv.Deletes = append(pv.Deletes, deletedChange(op, excluded))
	}
}

// previewHeld are the deletes the guard holds: those it took out of the
// plan.
func (p pass) previewHeld(pv *Preview, pl *planned, excluded map[calsyncd.Key]excludedEvent) {
	if pl.verdict.Held == 0 {
		return
	}
	through := make(map[calsyncd.Key]bool, len(pl.plan.Deletes))
	for _, op := range pl.plan.Deletes {
		through[op.Key] = true
	}
	for _, op := range pl.unguarded {
		if !op.Forget && !through[op.Key] {
			c := deletedChange(op, excluded)
			if p.adopted(op.Key) {
				c.Reason = ReasonAdopted
			}
			pv.Held = append(pv.Held, c)
		}
	}
}

func eventChange(op diff.Op) Change {
	c := Change{Key: op.Key}
	if op.Event != nil {
		c.Summary, c.Start, c.Recurrence = op.Event.Summary, op.Event.Start, op.Event.Recurrence
	}
	return c
}

// exclusion is why the filters left out the i-th excluded event (nil when
// the render did not say).
func (p pass) exclusion(i int) *Filtered {
	why := p.rendered.Why
	if i >= len(why) || p.policy == nil {
		return nil
	}
	prefix := "filters"
	if p.sub.Presentation.Filters == nil {
		prefix = "defaults.filters"
	}
	x := why[i]
	f := &Filtered{Text: p.policy.Explain(x, prefix), Match: "exclude"}
	idx := []int{x.Rule}
	if x.Rule < 0 {
		f.Match, idx = "no_include", x.Includes
	}
	for _, j := range idx {
		if j < 0 || j >= len(p.policy.Filters) {
			continue
		}
		r := p.policy.Filters[j]
		kind := "include"
		if r.Exclude {
			kind = "exclude"
		}
		f.Rules = append(f.Rules, FilterRule{Key: fmt.Sprintf("%s[%d]", prefix, j), Index: j, Kind: kind, Field: string(r.Field), Pattern: r.Pattern.String()})
	}
	return f
}

// excludedEvent is an event the filters left out, with why.
type excludedEvent struct {
	ev  *feed.Event
	why *Filtered
}

// changedFields names what an update changes, from the digest the mapping
// was written with; nil when the mapping has none.
func changedFields(op diff.Op) []string {
	if op.Event == nil || op.Mapping == nil || op.Mapping.Fields == "" {
		return nil
	}
	f := feed.ChangedFields(op.Mapping.Fields, op.Event.Shown().Digest())
	if f == nil && len(op.Mapping.Fields) == len(op.Event.Shown().Digest()) {
		// The same fields, another hash: a change no field shows (a
		// THISANDFUTURE override becoming its own series).
		return []string{"content"}
	}
	return f
}

// excludedByKey indexes the excluded events by key, and the masters by
// UID (key with no recurrence id).
func (p pass) excludedByKey() map[calsyncd.Key]excludedEvent {
	evs := p.rendered.Excluded
	out := make(map[calsyncd.Key]excludedEvent, len(evs))
	for i := range evs {
		out[evs[i].Key()] = excludedEvent{ev: &evs[i], why: p.exclusion(i)}
	}
	return out
}

// deletedChange describes a delete: an event the filters excluded is
// known by its feed title and start; one that left the feed only by its
// key (and its original start, for an occurrence).
func deletedChange(op diff.Op, excluded map[calsyncd.Key]excludedEvent) Change {
	c := Change{Key: op.Key, Reason: ReasonLeft}
	master := excluded[calsyncd.Key{UID: op.Key.UID}]
	ex, found := excluded[op.Key]
	if !found && op.Key.Kind() != calsyncd.Top {
		ex, found = excluded[calsyncd.Key{UID: op.Key.UID, RecurrenceID: op.Key.Start()}]
	}
	switch {
	case found:
		c.Summary, c.Start, c.Reason, c.Filter = ex.ev.Summary, ex.ev.Start, ReasonFiltered, ex.why
		c.Recurrence = ex.ev.Recurrence
	case master.ev != nil:
		c.Summary, c.Reason, c.Filter = master.ev.Summary, ReasonFiltered, master.why
		c.Start = occurrence(op.Key, master.ev.Start)
	default:
		c.Start = occurrence(op.Key, feed.Time{})
	}
	return c
}

// occurrence is the original start a key names (zero for a Top key).
func occurrence(k calsyncd.Key, seriesStart feed.Time) feed.Time {
	if k.Kind() == calsyncd.Top {
		return seriesStart
	}
	t, ok := feed.ParseRecurrenceID(k.Start(), seriesStart)
	if !ok {
		return feed.Time{}
	}
	return feed.Time{AllDay: len(k.Start()) == 8, T: t, Zone: seriesStart.Zone}
}

// Writes is how many writes the preview plans.
func (pv Preview) Writes() int { return len(pv.Creates) + len(pv.Updates) + len(pv.Deletes) }

// sortChanges orders changes by start, then key, for display.
func sortChanges(cs []Change) {
	slices.SortStableFunc(cs, func(a, b Change) int {
		if c := a.Start.T.Compare(b.Start.T); c != 0 {
			return c
		}
		return compareKeys(a.Key, b.Key)
	})
}
