package subscription

import (
	"fmt"
	"strings"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// guard refuses a feed over its cost limits (nothing is written: the run
// fails) and holds deletes that look like a broken feed rather than a
// change, weighed against the last run and the high-water mark (see
// diff.Guard).
func (p pass) guard(pl planned) (planned, *ending) {
	pl.unguarded, pl.filtered = pl.plan.Deletes, filteredDeletes(pl.plan.Deletes, p.rendered.Excluded)
	pl.plan, pl.cutHeld = p.holdCut(pl.plan)
	g, lim := p.cfg.Sync.DeleteGuard, p.cfg.EffectiveLimits(p.sub)
	now := p.parsed.now
	pl.peak, pl.peakAt = diff.NextPeak(p.found.GuardPeak, p.found.GuardPeakAt, pl.mapped, now, g.Period.D())
	pl.plan, pl.verdict = diff.Guard(pl.plan, diff.GuardInput{Events: len(pl.shaped.shaped.Events), Mapped: pl.mapped, Peak: pl.peak,
		FeedEvents: p.rendered.count, Expanded: pl.shaped.shaped.ExpandedOccurrences(), ExpansionCut: pl.shaped.shaped.ExpansionCut,
		Limits: diff.Limits{MaxEvents: lim.MaxEvents, MaxExpanded: lim.MaxInstancesExpanded},
		Runs:   p.found.GuardRuns, Base: p.found.GuardBase, Held: p.found.GuardHeld, ByConfig: p.byConfig(pl.filtered),
		Adopted: p.adopted, Allow: p.opts.AllowDeletes,
		Policy: diff.DeletePolicy{MinDeletes: g.MinDeletes, MaxFraction: g.MaxFraction, ConfirmRuns: g.ConfirmRuns}})
	pl.verdict.Held += pl.cutHeld
	pl.creates, pl.updates = len(pl.plan.Creates), len(pl.plan.Updates)
	if err := pl.verdict.Refused; err != nil {
		e := stop(calsyncd.OutcomeFailed, err)
		e.refused = err
		return pl, e
	}
	if pl.verdict.Released > 0 && g.Period > 0 {
		// The shrink is confirmed: the feed's new size is the mark.
		pl.peak, pl.peakAt = len(pl.shaped.shaped.Events), now
	}
	return pl, nil
}

// follow is the second round's guard: its deletes follow the first
// round's verdict.
func (p pass) follow(pl planned) (planned, *ending) {
	first := p.rounds[0].planned
	pl.plan, pl.cutHeld = p.holdCut(pl.plan)
	v := first.verdict
	v.Held += pl.cutHeld
	pl.plan, pl.verdict = v.Follow(pl.plan)
	pl.peak, pl.peakAt, pl.filtered = first.peak, first.peakAt, first.filtered
	pl.creates, pl.updates = len(pl.plan.Creates), len(pl.plan.Updates)
	return pl, nil
}

// byConfig: the run's deletes follow a change of the configuration
// rather than of the feed: some are of events the filters exclude, or the
// fingerprint (filters, presentation, time zone, window, identity)
// differs from the last complete run's, or a hold that began so goes on.
// Waiting never confirms such deletes (diff.GuardInput.ByConfig).
func (p pass) byConfig(filtered int) bool {
	changed := p.found.RenderPolicy != "" && p.fingerprint() != p.found.RenderPolicy
	return filtered > 0 || changed || (p.found.GuardRuns > 0 && p.found.GuardByConfig)
}

// firstPlan and lastPlan are the first and the last round's plans (nil:
// the pass planned nothing).
func (p pass) firstPlan() *planned {
	if len(p.rounds) == 0 {
		return nil
	}
	return &p.rounds[0].planned
}

func (p pass) lastPlan() *planned {
	if len(p.rounds) == 0 {
		return nil
	}
	return &p.rounds[len(p.rounds)-1].planned
}

// verdict is the guard's, for the whole run (zero: no plan).
func (p pass) verdict() diff.Verdict {
	if pl := p.lastPlan(); pl != nil {
		return pl.verdict
	}
	return diff.Verdict{}
}

// shapedEvents are the last round's shaped events.
func (p pass) shapedEvents() []feed.Event {
	if pl := p.lastPlan(); pl != nil {
		return pl.shaped.shaped.Events
	}
	return nil
}

// guardPeak is the guard's high-water mark (0: no plan).
func (p pass) guardPeak() int {
	if pl := p.lastPlan(); pl != nil {
		return pl.peak
	}
	return 0
}

// heldAdopted are the deletes the guard held because the run adopted
// their events.
func (p pass) heldAdopted() []calsyncd.Key {
	first := p.firstPlan()
	if first == nil || first.verdict.Adopted == 0 {
		return nil
	}
	var keys []calsyncd.Key
	for _, op := range first.unguarded {
		if !op.Forget && p.adopted(op.Key) {
			keys = append(keys, op.Key)
		}
	}
	return keys
}

// heldWhy says why the guard held the run's deletes and what releases
// them ("": none held).
func (p pass) heldWhy() string {
	v := p.verdict()
	if v.Held == 0 {
		return ""
	}
	cutHeld := 0
	for _, rd := range p.rounds {
		cutHeld += rd.planned.cutHeld
	}
	var why []string
	if cutHeld > 0 {
		why = append(why, fmt.Sprintf("%d are asked for by a feed cut before END:VCALENDAR, which deletes nothing (see the subscription's note)", cutHeld))
	}
	if n := v.Held - v.Adopted - cutHeld; n > 0 {
		switch {
		case v.ByConfig:
			why = append(why, fmt.Sprintf("%d follow a change of the configuration (filters, window, time zone or presentation), which waiting never confirms: run `calsyncd sync --allow-deletes %s` if the change is meant", n, p.sub.ID))
		default:
			why = append(why, fmt.Sprintf("%d look like a broken feed rather than a change: they are deleted once %d runs in a row ask for the same deletes (this run is %d), or at once with `calsyncd sync --allow-deletes %s`",
				n, p.cfg.Sync.DeleteGuard.ConfirmRuns, v.Runs, p.sub.ID))
		}
	}
	if v.Adopted > 0 {
		why = append(why, fmt.Sprintf("%d are events found in Google that this database does not know it wrote (a lost database, a run that died before recording what it wrote, or an installation of the same owner name writing the calendar) and the feed no longer has: they are left alone; `calsyncd sync --reconcile --allow-deletes %s` deletes them", v.Adopted, p.sub.ID))
	}
	return strings.Join(why, "; ")
}

// filterHeld is how many of the held deletes the filters caused.
func (p pass) filterHeld() int {
	first := p.firstPlan()
	if first == nil {
		return 0
	}
	return min(first.filtered, p.verdict().Held)
}

// filtersKind starts the note on deletes held because of filters.
const filtersKind noteKind = "filters: "

func (p pass) filterHeldNote() string {
	return fmt.Sprintf("%s%d of the %d deletes the mass-delete guard holds are events the subscription's filters now exclude (a filter change, not a broken feed): run `calsyncd sync --dry-run %s` to see them and `calsyncd sync --allow-deletes %s` if the filters are meant",
		filtersKind, p.filterHeld(), p.verdict().Held, p.sub.ID, p.sub.ID)
}

// unstable: the feed mints new UIDs on every fetch, and the subscription
// does not use content identity. Naive mirrors delete and recreate
// everything for such feeds; the plan instead moves each mapping to its
// event's new UID, without a single write. Content identity avoids even
// that.
func (p pass) unstable() bool {
	first := p.firstPlan()
	return first != nil && first.churn != nil && first.churn.Unstable && p.sub.Identity != string(feed.IdentityContent)
}

// unstableKind is the note shown on a subscription whose feed changes its
// UIDs.
const unstableKind noteKind = "the feed mints new UIDs on every fetch (most events came back under new UIDs with unchanged content): set identity: content for this subscription; meanwhile its mappings are re-keyed each run, without writes"

// expansionKind starts the note on series written as single events.
const expansionKind noteKind = noteKind(diff.ExpansionNotePrefix)
