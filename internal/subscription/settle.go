package subscription

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
)

// settling is what settle folds the pass's results into, in the order of
// the stages: the run's record, the subscription's next state (before
// the state machine has its say), the standing notes by kind, and the
// run's log line.
type settling struct {
	end   ending
	run   calsyncd.Run
	state calsyncd.SubscriptionState
	// notes are the kinds of standing note this run settled, each with
	// its notes now (none: the kind's notes are gone).
	notes   map[noteKind][]string
	attrs   []any
	notable bool
}

// noteKind is a kind of standing note: the text every note of the kind
// starts with. Each kind is settled by one result; a kind no result
// settles keeps its notes.
type noteKind string

// noteKinds are every kind, in the order their notes are shown.
var noteKinds = []noteKind{limitKind, feedThrottledKind, cutKind, movedKind, unstableKind, alarmsKind, filtersKind, expansionKind}

// note settles kind: its notes are texts now ("" are none).
func (s *settling) note(kind noteKind, texts ...string) {
	if s.notes == nil {
		s.notes = map[noteKind][]string{}
	}
	notes := []string{}
	for _, t := range texts {
		if t != "" {
			notes = append(notes, t)
		}
	}
	s.notes[kind] = notes
}

// find adds attributes to the run's log line; warn: they deserve an
// operator's eye.
func (s *settling) find(warn bool, kv ...any) {
	s.notable = s.notable || warn
	s.attrs = append(s.attrs, kv...)
}

// standingNotes are the notes the run started with, less those of the
// kinds it settled, then the settled kinds' notes in noteKinds' order.
func (s *settling) standingNotes(notes []string) []string {
	out := notes[:0:0]
	for _, n := range notes {
		if _, settled := s.notes[kindOf(n)]; !settled {
			out = append(out, n)
		}
	}
	for _, k := range noteKinds {
		out = append(out, s.notes[k]...)
	}
	return out
}

// kindOf is the kind a note is of ("": none known).
func kindOf(note string) noteKind {
	for _, k := range noteKinds {
		if strings.HasPrefix(note, string(k)) {
			return k
		}
	}
	return ""
}

// settle folds the pass's results into the run's record and the
// subscription's next state, saves both (even when the caller's context
// is cancelled: what happened must not be lost), tells the Observer and
// the Listener and logs the run's line.
func (r *Runner) settle(ctx context.Context, p pass) (Report, error) {
	e := p.ending()
	if e.outcome == calsyncd.OutcomeFailed && ctx.Err() != nil {
		// Whatever stage failed, it failed because shutdown cancelled the
		// run (a write, the store, a listing): deferred, not failed.
		e = ending{outcome: calsyncd.OutcomeDeferred, interrupted: true, refused: e.refused}
	}
	s := settling{end: e, run: p.run, state: p.found}
	s.run.FinishedAt = r.now()
	p.fold(&s)
	next := s.state
	tr := Advance(&next, e.outcome, p.cfg.Sync.ErrorThreshold)
	rep := Report{Subscription: p.sub.ID, Run: s.run, State: next.State, Transition: tr, Plan: p.rounds.counts(), Err: e.err}
	if p.parsed.cal != nil {
		rep.Warnings = p.parsed.cal.Warnings
	}
	recordCtx := context.WithoutCancel(ctx)
	if err := r.Store.FinishRun(recordCtx, s.run); err != nil {
		return rep, err
	}
	if err := r.Store.SaveSubscription(recordCtx, next); err != nil {
		return rep, err
	}
	if r.Observer != nil {
		r.Observer.RunFinished(p.sub.ID, s.run.Outcome, next.State, s.run.FinishedAt.Sub(s.run.StartedAt))
		r.observeFiltered(p.sub.ID, s.run.Filtered)
		r.observeRepaired(p.sub.ID, s.run.Repaired)
	}
	if r.Listener != nil {
		r.Listener.Settled(p.settled(rep, next, e))
	}
	p.logRun(rep, &s)
	return rep, nil
}

// fold folds every result into s, in the order of the stages.
func (p pass) fold(s *settling) {
	s.end.settle(p, s)
	p.fetched.settle(p, s)
	p.parsed.settle(p, s)
	p.rendered.settle(p, s)
	p.repaired.settle(p, s)
	p.rounds.settle(p, s)
	p.vacated.settle(p, s)
	s.state.Notes = s.standingNotes(s.state.Notes)
}

// ending is how the pass ended: the stage that stopped it said so, or the
// reconcile or the writes did.
func (p pass) ending() ending {
	if p.end != nil {
		return *p.end
	}
	res := p.written()
	// A series written under a new id needs its exceptions again: the
	// next run must plan, not find the feed unchanged.
	clean := res.Deferred == 0 && res.Failed == 0 && res.Skipped == 0 && p.verdict().Held == 0 && len(res.RecreatedSeries) == 0
	if res.Err != nil {
		return ending{outcome: calsyncd.OutcomeFailed, err: res.Err}
	}
	if e := p.repaired.ending(); e != nil {
		return *e
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

// limitKind starts the note of a feed refused for its cost limits.
const limitKind noteKind = "Over its cost limit:"

// settle folds the outcome into the record and the state: the error, the
// note of a feed over its cost limits, and the guard's count of a mass
// delete, off when the feed is the version of the last complete run.
func (e ending) settle(p pass, s *settling) {
	s.run.Outcome = e.outcome
	if e.err != nil {
		s.run.ErrorClass, s.run.Error = calsyncd.ClassOf(e.err), e.err.Error()
	}
	st := &s.state
	switch {
	case e.err != nil:
		st.LastErrorClass, st.LastError = calsyncd.ClassOf(e.err), e.err.Error()
	case e.outcome != calsyncd.OutcomeDeferred:
		st.LastErrorClass, st.LastError = "", ""
	}
	if e.outcome == calsyncd.OutcomeNotModified {
		st.GuardRuns, st.HeldDeletes, st.GuardHeld, st.GuardBase, st.GuardByConfig = 0, 0, "", 0, false
	}
	switch {
	case e.refused != nil:
		s.note(limitKind, fmt.Sprintf("%s %s", limitKind, e.refused.Error()))
	case len(p.rounds) > 0:
		s.note(limitKind)
	}
	if e.interrupted {
		s.find(false, "reason", "shutdown interrupted the run; the next run picks it up")
	}
	if !e.waitUntil.IsZero() {
		s.find(false, "fetch_not_before", e.waitUntil.Format(time.RFC3339), "reason", "the feed server asked us to wait")
	}
}

// rounds are the pass's rounds of plan and apply.
type rounds []round

// counts are every round's plan, as guarded.
func (rs rounds) counts() PlanCounts {
	var c PlanCounts
	for i, rd := range rs {
		pl := rd.planned
		if i == 0 {
			c.Unchanged = pl.plan.Unchanged
		}
		c.Creates += pl.creates
		c.Updates += pl.updates
		c.Deletes += len(pl.plan.Deletes)
		c.HeldDeletes = pl.verdict.Held
		c.KeptDeletes, c.KeptUpdates = len(pl.kept.Deletes), len(pl.kept.Updates)
	}
	return c
}

// settle folds the plans and their writes into the record and the state:
// the writes, the guard's verdict and high-water mark, when the feed must
// be read in full again, and the notes on UIDs, filters and series
// written as single events.
func (rs rounds) settle(p pass, s *settling) {
	res := p.written()
	s.run.Created, s.run.Updated, s.run.Deleted = res.Created, res.Updated, res.Deleted
	s.run.Deferred, s.run.Failed, s.run.Rejected = res.Deferred, res.Failed, res.Rejected
	if len(rs) == 0 {
		return
	}
	first, last := rs[0].planned, rs[len(rs)-1].planned
	v := last.verdict
	s.run.Unchanged, s.run.HeldDeletes = first.plan.Unchanged, v.Held
	if a := rs[len(rs)-1].applied; a != nil {
		s.run.Repaired = a.repaired
	}
	st := &s.state
	if v.Refused == nil {
		st.GuardRuns, st.HeldDeletes, st.GuardHeld, st.GuardBase, st.GuardByConfig = v.Runs, v.Held, v.Digest, v.Base, v.ByConfig
	}
	st.GuardPeak, st.GuardPeakAt = last.peak, last.peakAt
	st.RereadAt = p.rereadAt()
	if first.churn != nil {
		if p.unstable() {
			s.note(unstableKind, string(unstableKind))
		} else {
			s.note(unstableKind)
		}
	}
	if v.Held > 0 && first.filtered > 0 {
		s.note(filtersKind, p.filterHeldNote())
	} else {
		s.note(filtersKind)
	}
	s.note(expansionKind, diff.ExpansionNote(last.shaped.shaped.Expanded))
	rs.findings(p, s)
}

// findings are the run line's account of the plans and their writes.
func (rs rounds) findings(p pass, s *settling) {
	first, last := rs[0].planned, rs[len(rs)-1].planned
	v, confirm := last.verdict, p.cfg.Sync.DeleteGuard.ConfirmRuns
	if p.unstable() {
		s.find(true, "unstable_uids", true, "new_uids", first.churn.New, "same_content", first.churn.Twins, "rekeyed", len(last.plan.Rekeys),
			"hint", "the feed mints new UIDs on every fetch; set identity: content for this subscription")
	}
	switch {
	case v.Held > 0 && first.filtered > 0:
		s.find(true, "guard_runs", v.Runs, "releases_after", confirm, "mapped", last.mapped,
			"held_by_filters", p.filterHeld(), "hint", p.filterHeldNote())
	case v.Held > 0:
		s.find(true, "guard_runs", v.Runs, "releases_after", confirm, "mapped", last.mapped,
			"held_by_config", v.ByConfig, "held_adopted", v.Adopted, "hint", p.heldWhy())
		if v.ByPeak {
			s.find(true, "held_against_peak", last.peak, "peak_since", last.peakAt.Format(time.RFC3339),
				"reason", "the feed shrank, step by step, far below the most it held over sync.delete_guard.period")
		}
	case v.Released > 0:
		s.find(true, "mass_delete_released", v.Released, "allowed_by_operator", v.Allowed)
	}
	if a := rs[0].applied; a != nil && a.refused > 0 {
		s.find(true, "refused_series", a.refused)
	}
	if n := len(last.shaped.shaped.Expanded); n > 0 {
		s.find(true, "series_as_single_events", n)
	}
	if res := p.written(); res.Skipped > 0 {
		s.find(false, "skipped", res.Skipped, "reason", "interrupted; the remaining writes are left for the next run")
	}
}

// logRun writes the run's one line: its counts and outcome, the state, and
// whatever the results found worth an operator's eye.
func (p pass) logRun(rep Report, s *settling) {
	run, e := rep.Run, s.end
	attrs := []any{
		"outcome", run.Outcome, "created", run.Created, "updated", run.Updated, "deleted", run.Deleted,
		"unchanged", run.Unchanged, "deferred", run.Deferred, "failed", run.Failed, "rejected", run.Rejected,
		"held_deletes", run.HeldDeletes, "repaired", run.Repaired, "state", rep.State, "consecutive_errors", rep.Transition.ConsecutiveErrors,
		"duration", run.FinishedAt.Sub(run.StartedAt).Round(time.Millisecond).String(),
	}
	notable := s.notable
	if tr := rep.Transition; tr.Changed {
		attrs, notable = append(attrs, "state_changed_from", tr.From), true
	}
	attrs = append(attrs, s.attrs...)
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

// writesText is "1 write", "2 writes".
func writesText(n int) string {
	if n == 1 {
		return "1 write"
	}
	return fmt.Sprintf("%d writes", n)
}
