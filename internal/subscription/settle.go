package subscription

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// ending is how the pass ended: the stage that stopped it said so, or the
// writes did.
func (p pass) ending() ending {
	if p.end != nil {
		return *p.end
	}
	res := p.applied
	// A series written under a new id needs its exceptions again: the
	// next run must plan, not find the feed unchanged.
	clean := res.Deferred == 0 && res.Failed == 0 && res.Skipped == 0 && p.verdict.Held == 0 && len(res.RecreatedSeries) == 0
	if res.Err != nil {
		return ending{outcome: calsyncd.OutcomeFailed, err: res.Err}
	}
	if rp := p.repaired; rp != nil && rp.skipped != nil {
		// The run could not do what it was asked (an operator's
		// --reconcile, or a reconcile that was due): a failure, unless
		// Google only asked us to wait. The next run reconciles again.
		err := fmt.Errorf("subscription: reconcile: Google's events could not be listed: %w", rp.skipped)
		if c := calsyncd.ClassOf(rp.skipped); c == calsyncd.ClassRateLimited || c == calsyncd.ClassUsageLimited {
			return ending{outcome: calsyncd.OutcomeDeferred, err: err}
		}
		return ending{outcome: calsyncd.OutcomeFailed, err: err}
	}
	switch {
	case res.Failed > 0 && res.Writes() == 0 && res.Deferred == 0:
		// The writer gave up on them after its retries: Google is having
		// trouble (5xx, connections broken), which is transient, not a
		// fault of ours (class internal would send the operator to the log).
		return ending{outcome: calsyncd.OutcomeFailed, err: fmt.Errorf("subscription: %s failed: %w", writesText(res.Failed),
			calsyncd.NewError(calsyncd.ClassTransient, "Google answered with server errors beyond the writer's retries; they are tried again on the next run"))}
	case res.Skipped > 0:
		// Interrupted by shutdown: the rest is picked up by the next run.
		return ending{outcome: calsyncd.OutcomeDeferred}
	case res.Failed > 0 || res.Rejected > 0:
		return ending{outcome: calsyncd.OutcomePartial, keep: clean}
	case res.Deferred > 0:
		return ending{outcome: calsyncd.OutcomeDeferred}
	}
	return ending{outcome: calsyncd.OutcomeOK, keep: clean}
}

// record is the run as the store keeps it.
func (p pass) record(e ending) calsyncd.Run {
	run := p.run
	run.Outcome = e.outcome
	res := p.applied
	run.Created, run.Updated, run.Deleted = res.Created, res.Updated, res.Deleted
	run.Deferred, run.Failed, run.Rejected = res.Deferred, res.Failed, res.Rejected
	run.Unchanged, run.HeldDeletes = p.planned.Unchanged, p.verdict.Held
	run.Filtered = len(p.rendered.Excluded)
	if p.repaired != nil {
		run.Repaired = p.repaired.content
	}
	if e.err != nil {
		run.ErrorClass, run.Error = calsyncd.ClassOf(e.err), e.err.Error()
	}
	return run
}

// nextState is the subscription's state after the pass, before the state
// machine has its say: what each stage learnt, folded into the state the
// run started from.
func (p pass) nextState(e ending) calsyncd.SubscriptionState {
	st := p.found
	if !p.comeBack.IsZero() {
		st.FetchNotBefore = p.comeBack
	}
	switch {
	case e.err != nil:
		st.LastErrorClass, st.LastError = calsyncd.ClassOf(e.err), e.err.Error()
	case e.outcome != calsyncd.OutcomeDeferred:
		st.LastErrorClass, st.LastError = "", ""
	}
	if e.keep && p.resp != nil {
		st.ETag, st.LastModified, st.BodyHash = p.resp.ETag, p.resp.LastModified, p.resp.BodyHash
		st.RenderPolicy = p.fingerprint()
	}
	switch {
	case e.outcome == calsyncd.OutcomeNotModified:
		// The feed is the version of the last complete run: any mass
		// delete the guard was counting is off.
		st.GuardRuns, st.HeldDeletes, st.GuardHeld, st.GuardBase, st.GuardByConfig = 0, 0, "", 0, false
	case p.round > 0 && p.verdict.Refused == nil:
		v := p.verdict
		st.GuardRuns, st.HeldDeletes, st.GuardHeld, st.GuardBase, st.GuardByConfig = v.Runs, v.Held, v.Digest, v.Base, v.ByConfig
	}
	if p.round > 0 {
		st.GuardPeak, st.GuardPeakAt = p.peak, p.peakAt
	}
	if p.round > 0 || p.verdict.Refused != nil {
		st.Notes = withoutNotePrefix(st.Notes, limitNotePrefix)
		if err := p.verdict.Refused; err != nil {
			st.Notes = append(st.Notes, fmt.Sprintf("%s %s", limitNotePrefix, err.Error()))
		}
	}
	if p.repaired != nil && p.repaired.skipped == nil {
		st.LastReconcileAt = p.repaired.at
	}
	st = p.feedThrottle(st)
	st = p.cutState(st)
	st = p.rereadState(st)
	st = p.moveState(st)
	if p.churn != nil {
		st.Notes = withoutNote(st.Notes, unstableNote)
		if p.unstable() {
			st.Notes = append(st.Notes, unstableNote)
		}
	}
	if p.cal != nil {
		st.Filtered = len(p.rendered.Excluded)
	}
	if p.round > 0 {
		p.renderNotes(&st)
		st.Notes = withoutNotePrefix(st.Notes, diff.ExpansionNotePrefix)
		if note := diff.ExpansionNote(p.shaped.Expanded); note != "" {
			st.Notes = append(st.Notes, note)
		}
	}
	return st
}

// heldWhy says why the guard held the run's deletes and what releases
// them ("": none held).
func (p pass) heldWhy() string {
	v := p.verdict
	if v.Held == 0 {
		return ""
	}
	var why []string
	if p.cutHeld > 0 {
		why = append(why, fmt.Sprintf("%d are asked for by a feed cut before END:VCALENDAR, which deletes nothing (see the subscription's note)", p.cutHeld))
	}
	if n := v.Held - v.Adopted - p.cutHeld; n > 0 {
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

// unstable: the feed mints new UIDs on every fetch, and the subscription
// does not use content identity. Naive mirrors delete and recreate
// everything for such feeds; the plan instead moves each mapping to its
// event's new UID, without a single write. Content identity avoids even
// that.
func (p pass) unstable() bool {
	return p.churn != nil && p.churn.Unstable && p.sub.Identity != string(feed.IdentityContent)
}

// feedThrottleNotice is how long a feed server must have answered every
// fetch with 429 before the status and the alerts say so: a rate limit
// is no failure (the subscription stays ACTIVE), but one that never ends
// means the calendar is no longer updated.
const feedThrottleNotice = 24 * time.Hour

// feedThrottledNotePrefix starts the note of a feed throttled for days.
const feedThrottledNotePrefix = "The feed server has answered every fetch with 429"

// feedThrottle follows the feed server's 429 streak: it starts at the
// first 429 and ends at any other answer; after feedThrottleNotice the
// subscription's status says so.
func (p pass) feedThrottle(st calsyncd.SubscriptionState) calsyncd.SubscriptionState {
	switch {
	case p.feed429 && st.FeedThrottledSince.IsZero():
		st.FeedThrottledSince = p.run.StartedAt
	case p.feedAnswered:
		st.FeedThrottledSince = time.Time{}
	}
	st.Notes = withoutNotePrefix(st.Notes, feedThrottledNotePrefix)
	if p.feedThrottled(st) {
		st.Notes = append(st.Notes, fmt.Sprintf("%s (too many requests) since %s: the calendar has not been updated since. "+
			"calsyncd keeps the subscription ACTIVE and comes back when the server says (Retry-After); if it lasts, "+
			"ask the feed's provider whether they limit this host, or sync less often (schedule)",
			feedThrottledNotePrefix, st.FeedThrottledSince.UTC().Format(time.RFC3339)))
	}
	return st
}

// feedThrottled: the feed's 429 streak has lasted feedThrottleNotice.
func (p pass) feedThrottled(st calsyncd.SubscriptionState) bool {
	return !st.FeedThrottledSince.IsZero() && p.run.StartedAt.Sub(st.FeedThrottledSince) >= feedThrottleNotice
}

// limitNotePrefix starts the note of a feed refused for its cost limits.
const limitNotePrefix = "Over its cost limit:"

// unstableNote is shown on a subscription whose feed changes its UIDs.
const unstableNote = "the feed mints new UIDs on every fetch (most events came back under new UIDs with unchanged content): set identity: content for this subscription; meanwhile its mappings are re-keyed each run, without writes"

// logRun writes the run's one line: its counts and outcome, the state, and
// whatever the stages found worth an operator's eye.
func (p pass) logRun(rep Report, e ending) {
	run := rep.Run
	attrs := []any{
		"outcome", run.Outcome, "created", run.Created, "updated", run.Updated, "deleted", run.Deleted,
		"unchanged", run.Unchanged, "deferred", run.Deferred, "failed", run.Failed, "rejected", run.Rejected,
		"held_deletes", run.HeldDeletes, "repaired", run.Repaired, "state", rep.State, "consecutive_errors", rep.Transition.ConsecutiveErrors,
		"duration", run.FinishedAt.Sub(run.StartedAt).Round(time.Millisecond).String(),
	}
	notable, more := p.findings(rep, e)
	attrs = append(attrs, more...)
	if run.ErrorClass != "" {
		attrs = append(attrs, "class", run.ErrorClass, "error", run.Error)
	}
	msg, level := "sync finished", slog.LevelInfo
	switch {
	case e.interrupted:
		msg, level = "sync interrupted by shutdown; deferred "+writesText(run.Deferred), slog.LevelWarn
	case run.Outcome == calsyncd.OutcomeDeferred:
		msg, level = "sync deferred "+writesText(run.Deferred), slog.LevelWarn
	case run.Outcome == calsyncd.OutcomeFailed:
		msg, level = "sync failed", slog.LevelError
	case run.Outcome == calsyncd.OutcomePartial || notable:
		level = slog.LevelWarn
	}
	p.log.Log(context.Background(), level, msg, attrs...)
}

// findings are the run line's attributes beyond the counts, and whether
// any of them deserves a warning.
func (p pass) findings(rep Report, e ending) (bool, []any) {
	var attrs []any
	notable := false
	add := func(warn bool, kv ...any) {
		notable = notable || warn
		attrs = append(attrs, kv...)
	}
	if tr := rep.Transition; tr.Changed {
		add(true, "state_changed_from", tr.From)
	}
	if e.interrupted {
		add(false, "reason", "shutdown interrupted the run; the next run picks it up")
	}
	if !e.waitUntil.IsZero() {
		add(false, "fetch_not_before", e.waitUntil.Format(time.RFC3339), "reason", "the feed server asked us to wait")
	}
	if p.cal != nil && len(p.cal.Warnings) > 0 {
		add(true, "feed_warnings", len(p.cal.Warnings), "first_warning", p.cal.Warnings[0].String(),
			"warning_kinds", kindsOf(p.cal.Warnings).summary())
	}
	if rp := p.repaired; rp != nil && rp.skipped != nil {
		add(true, "reconcile_skipped", rp.skipped.Error(), "reconcile_class", calsyncd.ClassOf(rp.skipped))
	} else if rp != nil && rp.adopted+rp.refreshed+rp.duplicates > 0 {
		add(true, "reconciled_adopted", rp.adopted, "reconciled_restoring", rp.refreshed,
			"reconciled_duplicates", rp.duplicates, "duplicates_deleted", rp.swept)
	}
	if p.unstable() {
		add(true, "unstable_uids", true, "new_uids", p.churn.New, "same_content", p.churn.Twins, "rekeyed", len(p.plan.Rekeys),
			"hint", "the feed mints new UIDs on every fetch; set identity: content for this subscription")
	}
	if n := len(p.rendered.Excluded); n > 0 {
		add(false, "filtered", n)
	}
	if v := p.verdict; v.Held > 0 && p.filtered > 0 {
		add(true, "guard_runs", v.Runs, "releases_after", p.cfg.Sync.DeleteGuard.ConfirmRuns, "mapped", p.mapped,
			"held_by_filters", min(p.filtered, v.Held), "hint", p.filterHeldNote())
	} else if v.Held > 0 {
		add(true, "guard_runs", v.Runs, "releases_after", p.cfg.Sync.DeleteGuard.ConfirmRuns, "mapped", p.mapped,
			"held_by_config", v.ByConfig, "held_adopted", v.Adopted, "hint", p.heldWhy())
		if v.ByPeak {
			add(true, "held_against_peak", p.peak, "peak_since", p.peakAt.Format(time.RFC3339),
				"reason", "the feed shrank, step by step, far below the most it held over sync.delete_guard.period")
		}
	} else if v.Released > 0 {
		add(true, "mass_delete_released", v.Released, "allowed_by_operator", v.Allowed)
	}
	if p.refused > 0 {
		add(true, "refused_series", p.refused)
	}
	p.moveFindings(add)
	if n := len(p.shaped.Expanded); n > 0 {
		add(true, "series_as_single_events", n)
	}
	if p.applied.Skipped > 0 {
		add(false, "skipped", p.applied.Skipped, "reason", "interrupted; the remaining writes are left for the next run")
	}
	return notable, attrs
}

func withoutNotePrefix(notes []string, prefix string) []string {
	out := notes[:0:0]
	for _, n := range notes {
		if !strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

func withoutNote(notes []string, note string) []string {
	out := notes[:0:0]
	for _, n := range notes {
		if n != note {
			out = append(out, n)
		}
	}
	return out
}

// writesText is "1 write", "2 writes".
func writesText(n int) string {
	if n == 1 {
		return "1 write"
	}
	return fmt.Sprintf("%d writes", n)
}
