package subscription

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/mapping"
)

// Fetcher fetches a feed.
type Fetcher interface {
	Fetch(ctx context.Context, req fetch.Request) (*fetch.Response, error)
}

// Writer applies a plan to Google for one account.
type Writer interface {
	Apply(ctx context.Context, b diff.Batch, p calsyncd.Persister) calsyncd.WriteResult
	ListOwned(ctx context.Context, calendarID, subscriptionID string) ([]diff.Owned, error)
	// Unsupported says why Google cannot hold ev as a recurring event, or
	// "" when it can (as far as is known before asking).
	Unsupported(ev *feed.Event) string
}

// Store is the state the runner reads and writes.
type Store interface {
	EnsureSubscription(ctx context.Context, id, calendar, account string) (calsyncd.SubscriptionState, error)
	SaveSubscription(ctx context.Context, st calsyncd.SubscriptionState) error
	Mappings(ctx context.Context, subscriptionID string) ([]calsyncd.Mapping, error)
	PutMapping(ctx context.Context, subscriptionID string, m calsyncd.Mapping) error
	DeleteMapping(ctx context.Context, subscriptionID string, k calsyncd.Key) error
	Rejections(ctx context.Context, subscriptionID string) ([]calsyncd.Rejection, error)
	PutRejection(ctx context.Context, subscriptionID string, r calsyncd.Rejection) error
	DeleteRejection(ctx context.Context, subscriptionID string, k calsyncd.Key) error
	StartRun(ctx context.Context, subscriptionID string, started time.Time) (int64, error)
	FinishRun(ctx context.Context, r calsyncd.Run) error
}

// Runner syncs subscriptions.
type Runner struct {
	// Config is read at the start of each run; use SetConfig to swap it
	// while runs are in flight (SIGHUP).
	Config  *config.Config
	Store   Store
	Fetcher Fetcher
	// Writer returns the writer for a Google account.
	Writer func(account string) (Writer, error)
	// Locker, when set, keeps other processes from running the same
	// subscription at the same time.
	Locker Locker
	// Observer, when set, is told about fetches and runs (metrics).
	Observer Observer
	Log      *slog.Logger
	Now      func() time.Time

	mu      sync.Mutex
	running map[string]bool
}

// Options modify one sync.
type Options struct {
	// AllowDeletes releases deletes held by the mass-delete guard.
	AllowDeletes bool
	// Reconcile compares Google with our mappings even if it is not due.
	Reconcile bool
	// Started, when set, is called with the run's id as soon as it is
	// recorded.
	Started func(runID int64)
	// Scheduled runs respect the feed server's Retry-After; runs an
	// operator asked for do not.
	Scheduled bool
	// Drain, when closed, stops the run from starting new writes (shutdown);
	// writes in flight finish and are persisted.
	Drain <-chan struct{}
}

// SetConfig replaces the configuration used by runs that start from now on.
func (r *Runner) SetConfig(cfg *config.Config) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Config = cfg
}

func (r *Runner) config() *config.Config {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Config
}

// Report describes one sync.
type Report struct {
	Subscription string
	Run          calsyncd.Run
	State        calsyncd.State
	Transition   Transition
	Plan         PlanCounts
	Warnings     []feed.Warning
	// Err is why the run failed, if it did.
	Err error
}

// PlanCounts summarises the plan a run computed.
type PlanCounts struct {
	Creates, Updates, Deletes, Unchanged, HeldDeletes int
}

// Observer is told what runs do.
type Observer interface {
	// FeedFetched reports a fetch: ok, not_modified or error.
	FeedFetched(subscription, result string)
	RunFinished(subscription string, outcome calsyncd.Outcome, state calsyncd.State, d time.Duration)
}

// ErrBusy is returned when the subscription is already being synced.
var ErrBusy = errors.New("subscription: a sync of this subscription is already running")

// Sync runs one subscription once. Two syncs of the same subscription never
// overlap: the second returns ErrBusy.
func (r *Runner) Sync(ctx context.Context, sub config.Subscription, opts Options) (Report, error) {
	unlock, err := r.lock(sub.ID)
	if err != nil {
		return Report{Subscription: sub.ID}, err
	}
	defer unlock()
	return r.sync(ctx, sub, opts)
}

// lock makes the caller the only one working on the subscription, in this
// process and (with a Locker) on this host.
func (r *Runner) lock(id string) (func(), error) {
	r.mu.Lock()
	if r.running == nil {
		r.running = map[string]bool{}
	}
	if r.running[id] {
		r.mu.Unlock()
		return nil, ErrBusy
	}
	r.running[id] = true
	r.mu.Unlock()
	release := func() {
		r.mu.Lock()
		delete(r.running, id)
		r.mu.Unlock()
	}
	if r.Locker == nil {
		return release, nil
	}
	unlock, err := r.Locker.TryLock(id)
	if err != nil {
		release()
		return nil, err
	}
	return func() { unlock(); release() }, nil
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Runner) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.Default()
}

func (r *Runner) sync(ctx context.Context, sub config.Subscription, opts Options) (Report, error) {
	log := r.log().With("subscription", sub.ID, "feed", config.RedactURL(sub.URL))
	rep := Report{Subscription: sub.ID}
	st, err := r.Store.EnsureSubscription(ctx, sub.ID, sub.Calendar, sub.AccountName())
	if err != nil {
		return rep, err
	}
	run := calsyncd.Run{SubscriptionID: sub.ID, StartedAt: r.now()}
	if run.ID, err = r.Store.StartRun(ctx, sub.ID, run.StartedAt); err != nil {
		return rep, err
	}
	if opts.Started != nil {
		opts.Started(run.ID)
	}
	cfg := r.config()
	// The run is recorded even when the caller's context is cancelled
	// (shutdown): what happened must not be lost.
	recordCtx := context.WithoutCancel(ctx)

	outcome, keepValidators, resp, runErr := r.execute(ctx, log, cfg, sub, &st, &run, &rep, opts)
	run.Outcome = outcome
	run.FinishedAt = r.now()
	if runErr != nil {
		c := calsyncd.ClassOf(runErr)
		run.ErrorClass, run.Error = c, runErr.Error()
		st.LastErrorClass, st.LastError = c, runErr.Error()
		rep.Err = runErr
	} else if outcome != calsyncd.OutcomeDeferred {
		st.LastErrorClass, st.LastError = "", ""
	}
	if keepValidators && resp != nil {
		st.ETag, st.LastModified, st.BodyHash = resp.ETag, resp.LastModified, resp.BodyHash
	}
	rep.Transition = Apply(&st, outcome, cfg.Sync.ErrorThreshold)
	rep.State = st.State
	rep.Run = run
	if err := r.Store.FinishRun(recordCtx, run); err != nil {
		return rep, err
	}
	if err := r.Store.SaveSubscription(recordCtx, st); err != nil {
		return rep, err
	}
	if r.Observer != nil {
		r.Observer.RunFinished(sub.ID, run.Outcome, st.State, run.FinishedAt.Sub(run.StartedAt))
	}
	r.logRun(log, rep)
	return rep, nil
}

func (r *Runner) observeFetch(id, result string) {
	if r.Observer != nil {
		r.Observer.FeedFetched(id, result)
	}
}

func (r *Runner) logRun(log *slog.Logger, rep Report) {
	run := rep.Run
	attrs := []any{
		"outcome", run.Outcome, "created", run.Created, "updated", run.Updated, "deleted", run.Deleted,
		"unchanged", run.Unchanged, "deferred", run.Deferred, "failed", run.Failed, "rejected", run.Rejected,
		"held_deletes", run.HeldDeletes, "state", rep.State, "consecutive_errors", rep.Transition.ConsecutiveErrors,
		"duration", run.FinishedAt.Sub(run.StartedAt).Round(time.Millisecond).String(),
	}
	if run.ErrorClass != "" {
		attrs = append(attrs, "class", run.ErrorClass, "error", run.Error)
	}
	msg := "sync finished"
	level := slog.LevelInfo
	switch run.Outcome {
	case calsyncd.OutcomeDeferred:
		msg = fmt.Sprintf("sync deferred %d writes", run.Deferred)
		level = slog.LevelWarn
	case calsyncd.OutcomeFailed:
		msg, level = "sync failed", slog.LevelError
	case calsyncd.OutcomePartial:
		level = slog.LevelWarn
	}
	log.Log(context.Background(), level, msg, attrs...)
	if rep.Transition.Changed {
		log.Warn("subscription state changed", "from", rep.Transition.From, "to", rep.Transition.To,
			"consecutive_errors", rep.Transition.ConsecutiveErrors, "reason", run.Error)
	}
}

// execute does the work of a run and says how it ended: the outcome,
// whether the feed's validators may be stored (nothing left behind), and the
// fetched response.
func (r *Runner) execute(ctx context.Context, log *slog.Logger, cfg *config.Config, sub config.Subscription, st *calsyncd.SubscriptionState,
	run *calsyncd.Run, rep *Report, opts Options) (calsyncd.Outcome, bool, *fetch.Response, error) {

	mapped, err := r.Store.Mappings(ctx, sub.ID)
	if err != nil {
		return calsyncd.OutcomeFailed, false, nil, err
	}
	// A subscription's first sync is a backfill: it must not starve the
	// small changes of the account's other subscriptions.
	firstSync := len(mapped) == 0
	reconcile := opts.Reconcile || len(mapped) == 0 ||
		(cfg.Sync.ReconcileInterval > 0 && r.now().Sub(st.LastReconcileAt) >= cfg.Sync.ReconcileInterval.D())

	req := fetch.Request{URL: sub.URL, Headers: sub.Headers}
	if sub.BasicAuth != nil {
		req.BasicAuth = &fetch.BasicAuth{Username: sub.BasicAuth.Username, Password: sub.BasicAuth.Password}
	}
	// After a failure, fetch in full: a clean run must prove the whole
	// pipeline works again. A reconcile needs the feed's events too.
	if st.ConsecutiveErrors == 0 && !reconcile {
		req.ETag, req.LastModified = st.ETag, st.LastModified
	}
	if opts.Scheduled && r.now().Before(st.FetchNotBefore) {
		log.Info("feed server asked us to wait; not fetching yet", "until", st.FetchNotBefore.Format(time.RFC3339))
		return calsyncd.OutcomeDeferred, false, nil, nil
	}
	resp, err := r.Fetcher.Fetch(ctx, req)
	if err != nil {
		r.observeFetch(sub.ID, "error")
		var ferr *fetch.Error
		if errors.As(err, &ferr) && ferr.RetryAfter > 0 {
			st.FetchNotBefore = r.now().Add(min(ferr.RetryAfter, 24*time.Hour))
		}
		// A feed server that rate-limits us is not broken: come back later.
		if ferr != nil && ferr.StatusCode == 429 {
			return calsyncd.OutcomeDeferred, false, nil, err
		}
		return calsyncd.OutcomeFailed, false, nil, err
	}
	if !reconcile && (resp.NotModified || (resp.BodyHash != "" && resp.BodyHash == st.BodyHash && st.ConsecutiveErrors == 0)) {
		// The feed is the version of the last complete run: nothing to
		// write, and any mass delete the guard was counting is off.
		r.observeFetch(sub.ID, "not_modified")
		st.GuardRuns, st.HeldDeletes = 0, 0
		return calsyncd.OutcomeNotModified, false, nil, nil
	}
	win := cfg.EffectiveWindow(sub)
	now := r.now()
	cal, err := feed.ParseBytes(resp.Body, feed.Options{DefaultZone: cfg.EffectiveTimeZone(sub), Identity: feed.Identity(sub.Identity),
		WindowPast: win.Past.D(), WindowFuture: win.Future.D(), Now: now})
	if err != nil {
		// An HTML login page or a truncated body is a failed fetch too.
		r.observeFetch(sub.ID, "error")
		return calsyncd.OutcomeFailed, false, nil, err
	}
	r.observeFetch(sub.ID, "ok")
	rep.Warnings = cal.Warnings
	for _, w := range cal.Warnings {
		log.Warn("feed warning", "event", w.UID, "warning", w.Message)
	}

	w, err := r.Writer(sub.AccountName())
	if err != nil {
		return calsyncd.OutcomeFailed, false, nil, err
	}
	if reconcile {
		if mapped, err = r.reconcile(ctx, log, w, sub, st, mapped); err != nil {
			return calsyncd.OutcomeFailed, false, nil, err
		}
	}
	if mapped, err = r.migrateStandaloneOverrides(ctx, sub.ID, mapped); err != nil {
		return calsyncd.OutcomeFailed, false, nil, err
	}
	rejected, err := r.Store.Rejections(ctx, sub.ID)
	if err != nil {
		return calsyncd.OutcomeFailed, false, nil, err
	}
	// Google's shape of the feed: overrides as exceptions of their series,
	// series split at THISANDFUTURE, and series Google cannot hold as
	// standalone events within the window (bounded by a year each way when
	// the window is open).
	shapeOpts := diff.ShapeOptions{From: now.Add(-expansionReach), To: now.Add(expansionReach),
		Unsupported: w.Unsupported, Rejected: rejected}
	if win.Past > 0 {
		shapeOpts.From = now.Add(-win.Past.D())
	}
	if win.Future > 0 {
		shapeOpts.To = now.Add(win.Future.D())
	}
	shaped := diff.Shape(cal.Events, shapeOpts)
	// Only the window is mirrored: events that aged out of it stay in Google
	// as they are, whether they are still in the feed or not.
	inWindow := withinWindow(mapped, cal.Outside, now.Add(-win.Past.D()), win.Past > 0)
	plan := diff.Compute(shaped.Events, inWindow, rejected)
	churn := diff.DetectUnstableUIDs(shaped.Events, inWindow)
	st.Notes = withoutNote(st.Notes, unstableNote)
	if churn.Unstable && sub.Identity != string(feed.IdentityContent) {
		// Naive mirrors delete and recreate everything for such feeds; the
		// plan instead moves each mapping to its event's new UID, without a
		// single write. Content identity avoids even that.
		log.Warn("the feed mints new UIDs on every fetch: most events came back under new UIDs with unchanged content; they are re-keyed without writes — set identity: content for this subscription",
			"new", churn.New, "same_content", churn.Twins, "rekeyed", len(plan.Rekeys))
		st.Notes = append(st.Notes, unstableNote)
	}
	if err := r.rekey(ctx, sub.ID, plan.Rekeys); err != nil {
		return calsyncd.OutcomeFailed, false, nil, err
	}
	held := r.guard(log, cfg, sub, st, &plan, len(shaped.Events), len(inWindow), opts)
	run.HeldDeletes = held
	run.Unchanged = plan.Unchanged
	rep.Plan = PlanCounts{Creates: len(plan.Creates), Updates: len(plan.Updates), Deletes: len(plan.Deletes), Unchanged: plan.Unchanged, HeldDeletes: held}

	batch := func(p diff.Plan) diff.Batch {
		return diff.Batch{SubscriptionID: sub.ID, CalendarID: sub.Calendar, Ops: p.Ops(), Drain: opts.Drain, Backfill: firstSync}
	}
	pers := &persister{store: r.Store, sub: sub.ID}
	res := w.Apply(ctx, batch(plan), pers)
	if len(res.RefusedSeries) > 0 && res.Err == nil {
		// Google refused a series as it stands: mirror it as standalone
		// events at once rather than losing it until the next run.
		rejected = append(rejected, res.Rejections...)
		shapeOpts.Rejected = rejected
		shaped = diff.Shape(cal.Events, shapeOpts)
		if mapped, err = r.Store.Mappings(ctx, sub.ID); err != nil {
			return calsyncd.OutcomeFailed, false, nil, err
		}
		inWindow = withinWindow(mapped, cal.Outside, now.Add(-win.Past.D()), win.Past > 0)
		again := diff.Compute(shaped.Events, inWindow, rejected)
		if held > 0 {
			held += len(again.Deletes)
			again.Deletes = nil
			run.HeldDeletes, st.HeldDeletes = held, held
		}
		log.Warn("Google refused recurring series; writing them as single events", "series", len(res.RefusedSeries),
			"creates", len(again.Creates), "updates", len(again.Updates), "deletes", len(again.Deletes))
		res = mergeResults(res, w.Apply(ctx, batch(again), pers))
		rep.Plan.Creates += len(again.Creates)
		rep.Plan.Updates += len(again.Updates)
		rep.Plan.Deletes += len(again.Deletes)
		rep.Plan.HeldDeletes = held
	}
	if err := r.forgetLeftBehind(ctx, sub.ID, res.RecreatedSeries); err != nil {
		return calsyncd.OutcomeFailed, false, nil, err
	}
	st.Notes = withoutNotePrefix(st.Notes, diff.ExpansionNotePrefix)
	if note := diff.ExpansionNote(shaped.Expanded); note != "" {
		log.Warn("recurring series mirrored as single events", "series", len(shaped.Expanded))
		st.Notes = append(st.Notes, note)
	}
	run.Created, run.Updated, run.Deleted = res.Created, res.Updated, res.Deleted
	run.Deferred, run.Failed, run.Rejected = res.Deferred, res.Failed, res.Rejected

	// Rejections of events that left the feed are forgotten.
	inFeed := make(map[calsyncd.Key]bool, len(cal.Events)+len(shaped.Events))
	for i := range cal.Events {
		inFeed[cal.Events[i].Key()] = true
	}
	for i := range shaped.Events {
		inFeed[shaped.Events[i].Key()] = true
	}
	for _, rj := range rejected {
		if !inFeed[rj.Key] {
			if err := r.Store.DeleteRejection(context.WithoutCancel(ctx), sub.ID, rj.Key); err != nil {
				return calsyncd.OutcomeFailed, false, nil, err
			}
		}
	}

	// A series written under a new id needs its exceptions again: the
	// next run must plan, not find the feed unchanged.
	clean := res.Deferred == 0 && res.Failed == 0 && res.Skipped == 0 && held == 0 && len(res.RecreatedSeries) == 0
	switch {
	case res.Err != nil:
		return calsyncd.OutcomeFailed, false, resp, res.Err
	case res.Failed > 0 && res.Writes() == 0 && res.Deferred == 0:
		return calsyncd.OutcomeFailed, false, resp, fmt.Errorf("subscription: %d writes failed with transient Google errors", res.Failed)
	case res.Skipped > 0:
		// Interrupted by shutdown: the rest is picked up by the next run.
		log.Info("run interrupted; the remaining writes are left for the next run", "skipped", res.Skipped)
		return calsyncd.OutcomeDeferred, false, resp, nil
	case res.Failed > 0 || res.Rejected > 0:
		return calsyncd.OutcomePartial, clean, resp, nil
	case res.Deferred > 0:
		return calsyncd.OutcomeDeferred, false, resp, nil
	}
	return calsyncd.OutcomeOK, clean, resp, nil
}

// guard holds deletes that look like a broken feed rather than a change: a
// feed with no events while we hold mappings, or a plan deleting more than
// max_fraction and more than min_deletes of what we mapped. The deletes go
// once the condition has held for confirm_runs consecutive runs, or when the
// operator allows them. It returns how many deletes it held.
func (r *Runner) guard(log *slog.Logger, cfg *config.Config, sub config.Subscription, st *calsyncd.SubscriptionState, plan *diff.Plan, events, mapped int, opts Options) int {
	g := cfg.Sync.DeleteGuard
	n := len(plan.Deletes)
	suspicious := mapped > 0 && (events == 0 || (n > g.MinDeletes && float64(n) > g.MaxFraction*float64(mapped)))
	if !suspicious {
		st.GuardRuns, st.HeldDeletes = 0, 0
		return 0
	}
	st.GuardRuns++
	if opts.AllowDeletes || st.GuardRuns >= g.ConfirmRuns {
		log.Warn("mass delete released", "deletes", n, "mapped", mapped, "runs", st.GuardRuns, "allowed_by_operator", opts.AllowDeletes)
		st.GuardRuns, st.HeldDeletes = 0, 0
		return 0
	}
	log.Warn("mass delete held", "deletes", n, "mapped", mapped, "feed_events", events,
		"runs", st.GuardRuns, "releases_after", g.ConfirmRuns,
		"hint", "run `calsyncd sync --allow-deletes "+sub.ID+"` if the feed really lost these events")
	st.HeldDeletes = n
	plan.Deletes = nil
	return n
}

// unstableNote is shown on a subscription whose feed changes its UIDs.
const unstableNote = "the feed mints new UIDs on every fetch (most events came back under new UIDs with unchanged content): set identity: content for this subscription; meanwhile its mappings are re-keyed each run, without writes"

// rekey moves mappings to their events' new keys (same content, new UID).
func (r *Runner) rekey(ctx context.Context, sub string, rekeys []diff.Rekey) error {
	ctx = context.WithoutCancel(ctx)
	for _, rk := range rekeys {
		m := rk.From
		m.Key = rk.To
		if err := r.Store.PutMapping(ctx, sub, m); err != nil {
			return err
		}
		if err := r.Store.DeleteMapping(ctx, sub, rk.From.Key); err != nil {
			return err
		}
	}
	return nil
}

// migrateStandaloneOverrides moves the mappings of overrides written as
// events of their own (as calsyncd did before it wrote them as exceptions
// of their series: their id is our deterministic one, never Google's
// instance id) to a standalone key. The plan then deletes that event and
// writes the exception in its series.
func (r *Runner) migrateStandaloneOverrides(ctx context.Context, sub string, mapped []calsyncd.Mapping) ([]calsyncd.Mapping, error) {
	var moves []diff.Rekey
	for _, m := range mapped {
		if m.Key.Kind() == calsyncd.Instance && m.EventID == mapping.EventID(sub, m.Key, m.Generation) {
			moves = append(moves, diff.Rekey{From: m, To: calsyncd.StandaloneKey(m.Key.UID, m.Key.Start())})
		}
	}
	if len(moves) == 0 {
		return mapped, nil
	}
	if err := r.rekey(ctx, sub, moves); err != nil {
		return nil, err
	}
	return r.Store.Mappings(ctx, sub)
}

// forgetLeftBehind drops the mappings of the exceptions of series that
// were written under a new id: the exceptions stayed with the old event.
func (r *Runner) forgetLeftBehind(ctx context.Context, sub string, series []calsyncd.Key) error {
	if len(series) == 0 {
		return nil
	}
	gone := map[calsyncd.Key]bool{}
	for _, k := range series {
		gone[k] = true
	}
	mapped, err := r.Store.Mappings(ctx, sub)
	if err != nil {
		return err
	}
	for _, m := range mapped {
		if p, ok := m.Key.Parent(); ok && gone[p] {
			if err := r.Store.DeleteMapping(context.WithoutCancel(ctx), sub, m.Key); err != nil {
				return err
			}
		}
	}
	return nil
}

// expansionReach bounds, each way from now, the occurrences of a series
// written as standalone events when the window is open on that side.
const expansionReach = 365 * 24 * time.Hour

// mergeResults adds a second batch's outcome to the first's. A series that
// Google refused and that the second batch wrote as standalone events is
// no longer counted as rejected, and its exceptions' unattempted writes
// were superseded by the second plan.
func mergeResults(a, b calsyncd.WriteResult) calsyncd.WriteResult {
	a.Rejected -= len(a.RefusedSeries)
	a.Unparented = 0
	a.Created += b.Created
	a.Updated += b.Updated
	a.Deleted += b.Deleted
	a.Restored += b.Restored
	a.Adopted += b.Adopted
	a.Forgotten += b.Forgotten
	a.Deferred += b.Deferred
	a.Failed += b.Failed
	a.Rejected += b.Rejected
	a.Unparented += b.Unparented
	a.Skipped += b.Skipped
	a.Retries += b.Retries
	a.Waited += b.Waited
	a.Paced += b.Paced
	for c, n := range b.ByClass {
		if a.ByClass == nil {
			a.ByClass = map[calsyncd.ErrorClass]int{}
		}
		a.ByClass[c] += n
	}
	a.Rejections = append(a.Rejections, b.Rejections...)
	a.RefusedSeries = append(a.RefusedSeries, b.RefusedSeries...)
	a.RecreatedSeries = append(a.RecreatedSeries, b.RecreatedSeries...)
	a.ThrottleUntil = b.ThrottleUntil
	if a.Err == nil {
		a.Err = b.Err
	}
	return a
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

// withinWindow drops the mappings of events outside the sync window: those
// the parser dropped for being outside it, and those that ended before its
// start (known from their end time) whether or not the feed still has them.
func withinWindow(mapped []calsyncd.Mapping, outside []calsyncd.Key, start time.Time, bounded bool) []calsyncd.Mapping {
	if len(outside) == 0 && !bounded {
		return mapped
	}
	drop := make(map[calsyncd.Key]bool, len(outside))
	for _, k := range outside {
		drop[k] = true
	}
	out := make([]calsyncd.Mapping, 0, len(mapped))
	for _, m := range mapped {
		// A series the parser dropped takes every event shaped from it
		// along; an override without a series goes by its own key.
		outside := drop[m.Key] || drop[calsyncd.Key{UID: m.Key.UID}] || drop[calsyncd.Key{UID: m.Key.UID, RecurrenceID: m.Key.Start()}]
		if outside || (bounded && !m.EndsAt.IsZero() && m.EndsAt.Before(start)) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// reconcile repairs drift between Google and our mappings before planning:
// owned events we have no mapping for are adopted (a lost database),
// mapped events deleted by hand are refreshed so the plan restores them, and
// duplicate copies are deleted. It returns the mappings to plan against. A
// failure to list is not fatal: the sync goes on without repairs.
func (r *Runner) reconcile(ctx context.Context, log *slog.Logger, w Writer, sub config.Subscription, st *calsyncd.SubscriptionState,
	mapped []calsyncd.Mapping) ([]calsyncd.Mapping, error) {
	owned, err := w.ListOwned(ctx, sub.Calendar, sub.ID)
	if err != nil {
		log.Warn("reconcile skipped: cannot list owned events", "class", string(calsyncd.ClassOf(err)), "error", err)
		return mapped, nil
	}
	repair := diff.Reconcile(sub.ID, mapped, owned)
	st.LastReconcileAt = r.now()
	if repair.Empty() {
		return mapped, nil
	}
	persistCtx := context.WithoutCancel(ctx)
	for _, m := range append(repair.Adopt, repair.Refresh...) {
		if err := r.Store.PutMapping(persistCtx, sub.ID, m); err != nil {
			return nil, err
		}
	}
	removed := 0
	if len(repair.Duplicates) > 0 {
		res := w.Apply(ctx, diff.Batch{SubscriptionID: sub.ID, CalendarID: sub.Calendar, Ops: repair.Duplicates}, duplicateSweeper{})
		removed = res.Deleted
	}
	log.Warn("reconciled Google with the database", "adopted", len(repair.Adopt), "restoring", len(repair.Refresh),
		"duplicates", len(repair.Duplicates), "duplicates_deleted", removed)
	return r.Store.Mappings(ctx, sub.ID)
}

// duplicateSweeper persists nothing: deleting a duplicate copy must not
// forget the mapping of the copy we keep.
type duplicateSweeper struct{}

func (duplicateSweeper) Saved(context.Context, calsyncd.Mapping) error      { return nil }
func (duplicateSweeper) Deleted(context.Context, calsyncd.Key) error        { return nil }
func (duplicateSweeper) Rejected(context.Context, calsyncd.Rejection) error { return nil }

type persister struct {
	store Store
	sub   string
}

// Persisting never uses the run's context: a write Google has accepted must
// be recorded even while the daemon shuts down.
func (p *persister) Saved(ctx context.Context, m calsyncd.Mapping) error {
	return p.store.PutMapping(context.WithoutCancel(ctx), p.sub, m)
}

func (p *persister) Deleted(ctx context.Context, k calsyncd.Key) error {
	return p.store.DeleteMapping(context.WithoutCancel(ctx), p.sub, k)
}

func (p *persister) Rejected(ctx context.Context, rj calsyncd.Rejection) error {
	return p.store.PutRejection(context.WithoutCancel(ctx), p.sub, rj)
}
