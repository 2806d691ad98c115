package subscription

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
)

// DaemonStore is what the daemon reads beyond the runner's needs.
type DaemonStore interface {
	Subscription(ctx context.Context, id string) (calsyncd.SubscriptionState, error)
	Subscriptions(ctx context.Context) ([]calsyncd.SubscriptionState, error)
	DeleteSubscription(ctx context.Context, id string) error
	SetNextRun(ctx context.Context, id string, at time.Time) error
	// PruneRuns deletes the run history beyond the retention (keeping
	// each subscription's newest and newest successful run).
	PruneRuns(ctx context.Context, maxAge time.Duration, maxRuns int) (int, error)
}

// pruneEvery is how often the daemon prunes the run history.
const pruneEvery = time.Hour

// Daemon runs every configured subscription on its schedule until it is
// shut down: the heart of `calsyncd run`.
type Daemon struct {
	runner *Runner
	store  DaemonStore
	log    *slog.Logger
	// Seed makes the per-run jitter reproducible in tests.
	seed uint64

	mu       sync.Mutex
	cfg      *config.Config
	cadence  Cadence
	table    *timetable
	entries  map[string]*entry
	stopping bool
	started  bool
	inflight sync.WaitGroup
	// pendingPrune: removed subscriptions whose prune waits for a run.
	pendingPrune map[string]bool

	// work is the context of every run; it is cancelled only when the
	// shutdown deadline passes. drain is closed when shutdown begins: runs
	// stop starting new writes and let the ones in flight finish.
	work       context.Context
	cancelWork context.CancelFunc
	drain      chan struct{}

	// leases, when set, make this daemon one of several replicas: it runs
	// only the subscriptions of accounts whose lease it holds.
	leases     *LeaseKeeper
	stopLeases context.CancelFunc
	noCatchUp  bool
}

// SkipCatchUp keeps Start from running overdue subscriptions at once; they
// wait for their next scheduled run. Call it before Start.
func (d *Daemon) SkipCatchUp() { d.noCatchUp = true }

// UseLeases makes the daemon take turns with other replicas through account
// leases. Call it before Start.
func (d *Daemon) UseLeases(k *LeaseKeeper) { d.leases = k }

// accounts lists the accounts of the configured subscriptions.
func (d *Daemon) accounts() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, s := range d.cfg.Subscriptions {
		if a := s.AccountName(); !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}

// once starts the daemon's runs, under the account leases when it has
// them.
func (d *Daemon) once() Once { return Once{Runner: d.runner, Leases: d.leases} }

type entry struct {
	schedule *spreadSchedule
	sub      config.Subscription
}

// NewDaemon returns a daemon for cfg. seed varies the jitter (use the time
// in production, a constant in tests).
func NewDaemon(cfg *config.Config, runner *Runner, st DaemonStore, log *slog.Logger, seed uint64) *Daemon {
	if log == nil {
		log = slog.Default()
	}
	return &Daemon{runner: runner, store: st, log: log, seed: seed, cfg: cfg, entries: map[string]*entry{}, drain: make(chan struct{}),
		pendingPrune: map[string]bool{}}
}

// Start schedules every subscription and starts the scheduler.
// Subscriptions that have not run within the last interval (or never) run
// soon, spread over the first minutes instead of all at once.
func (d *Daemon) Start(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.started {
		return errors.New("subscription: daemon already started")
	}
	base, err := config.CronParser.Parse(d.cfg.Schedule)
	if err != nil {
		return fmt.Errorf("subscription: schedule: %w", err)
	}
	d.work, d.cancelWork = context.WithCancel(context.WithoutCancel(ctx))
	d.cadence = NewCadence(base, d.runner.now())
	if d.leases != nil {
		// Claim what we can before scheduling, so the catch-up runs are ours.
		d.mu.Unlock()
		d.leases.renew(ctx, d.accounts())
		d.mu.Lock()
		var lctx context.Context
		lctx, d.stopLeases = context.WithCancel(context.WithoutCancel(ctx))
		go d.leases.Keep(lctx, d.accounts)
	}
	d.table = newTimetable(d.scheduled)
	for _, sub := range d.cfg.Subscriptions {
		d.add(ctx, sub)
	}
	d.table.start()
	d.started = true
	d.warnNever()
	d.log.Info("scheduler started", "schedule", d.cfg.Schedule, "interval", d.cadence.Interval.String(),
		"spread", d.cadence.Spread.String(), "subscriptions", len(d.cfg.Subscriptions))
	d.inflight.Add(1)
	go func(cfg *config.Config) {
		defer d.inflight.Done()
		d.pruneRemoved(ctx, cfg)
	}(d.cfg)
	d.inflight.Add(1)
	go d.retain()
	return nil
}

// retain prunes the run history at start and every pruneEvery until
// shutdown, under the retention of the configuration of the moment.
func (d *Daemon) retain() {
	defer d.inflight.Done()
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		d.mu.Lock()
		r := d.cfg.Sync.Retention
		d.mu.Unlock()
		if n, err := d.store.PruneRuns(d.work, r.MaxAge.D(), r.MaxRuns); err != nil {
			d.log.Warn("cannot prune the run history", "error", err)
		} else if n > 0 {
			d.log.Info("pruned the run history", "runs", n, "max_age", r.MaxAge.String(), "max_runs", r.MaxRuns)
		}
		select {
		case <-d.drain:
			return
		case <-t.C:
		}
	}
}

// warnNever logs a schedule with no activation (d.mu held): validation
// refuses one, but a daemon given one anyway must not run back to back
// (spreadSchedule answers "never"), and the operator must learn why
// nothing runs.
func (d *Daemon) warnNever() {
	if d.cadence.Never(d.runner.now()) {
		d.log.Error("the schedule never fires: no time in the next five years matches it; no subscription is scheduled "+
			"(they still run when triggered); fix schedule and reload", "schedule", d.cfg.Schedule)
	}
}

// add schedules one subscription (d.mu held). Under a schedule that never
// fires it is not scheduled at all, not even to catch up.
func (d *Daemon) add(ctx context.Context, sub config.Subscription) {
	s := newSpreadSchedule(d.cadence, sub.ID, d.seed)
	now := d.runner.now()
	st, err := d.store.Subscription(ctx, sub.ID)
	if !d.noCatchUp && !d.cadence.Never(now) && (err != nil || st.UpdatedAt.IsZero() || now.Sub(st.UpdatedAt) > d.cadence.Interval+d.cadence.Spread/4) {
		// Catch up soon: spread over at most two minutes by phase.
		startup := min(d.cadence.Spread, 2*time.Minute)
		delay := time.Duration(float64(s.phase) / float64(d.cadence.Spread) * float64(startup))
		s.runSoon(now.Add(delay + time.Second))
	} else if err == nil && !st.UpdatedAt.IsZero() {
		s.ranBefore(st.UpdatedAt)
	}
	d.entries[sub.ID] = &entry{schedule: s, sub: sub}
	d.table.add(sub.ID, s)
}

// scheduled is a subscription's cron job.
func (d *Daemon) scheduled(id string) {
	d.mu.Lock()
	e, ok := d.entries[id]
	if !ok || d.stopping {
		d.mu.Unlock()
		return
	}
	sub, cfg := e.sub, d.cfg
	d.inflight.Add(1)
	d.mu.Unlock()
	defer d.inflight.Done()
	defer d.persistNextRun(id)

	if st, err := d.store.Subscription(d.work, id); err == nil && st.State == calsyncd.StateError {
		wait := errorBackoff(d.cadence.Interval, st.ConsecutiveErrors, cfg.Sync.ErrorThreshold, cfg.Sync.ErrorMaxInterval.D())
		if since := d.runner.now().Sub(st.UpdatedAt); since < wait {
			d.log.Debug("subscription in ERROR: waiting before retrying", "subscription", id,
				"retry_in", (wait - since).Round(time.Second).String())
			return
		}
	}
	_, err := d.once().Run(d.work, sub, Options{Scheduled: true, Drain: d.drain})
	defer d.afterRun(id)
	switch {
	case errors.Is(err, ErrLeaseHeld):
		d.log.Debug("another replica holds the account; not running", "subscription", id, "account", sub.AccountName())
	case err != nil && !errors.Is(err, ErrBusy):
		d.log.Error("sync could not run", "subscription", id, "error", err)
	}
}

func (d *Daemon) persistNextRun(id string) {
	next := d.NextRun(id)
	if next.IsZero() {
		d.mu.Lock()
		_, ok := d.entries[id]
		stopping := d.stopping
		d.mu.Unlock()
		if ok && !stopping {
			d.log.Warn("the schedule has no next run for the subscription: it is no longer scheduled", "subscription", id)
		}
		return
	}
	if err := d.store.SetNextRun(context.WithoutCancel(d.work), id, next); err != nil {
		d.log.Warn("cannot record the next run", "subscription", id, "error", err)
	}
}

// NextRun is when the subscription runs next (zero if unknown).
func (d *Daemon) NextRun(id string) time.Time {
	d.mu.Lock()
	_, ok := d.entries[id]
	tt := d.table
	d.mu.Unlock()
	if !ok || tt == nil {
		return time.Time{}
	}
	return tt.next(id)
}

// Running reports whether the scheduler is up (for health checks).
func (d *Daemon) Running() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.started && !d.stopping
}

// Subscriptions returns the configured subscriptions, by id.
func (d *Daemon) Subscriptions() []config.Subscription {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]config.Subscription, 0, len(d.entries))
	for _, e := range d.entries {
		out = append(out, e.sub)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ErrUnknownSubscription is returned by Trigger for an id not in the
// configuration.
var ErrUnknownSubscription = errors.New("subscription: no such subscription")

// ErrStopping is returned by Trigger during shutdown.
var ErrStopping = errors.New("subscription: the daemon is shutting down")

// Trigger runs a subscription now, in the background, with the operator's
// options, and returns the new run's id once it is recorded. ErrBusy means
// a run is already going; a *LeaseHeldError names the process holding the
// subscription's account when this daemon does not hold it (and cannot
// claim it now).
func (d *Daemon) Trigger(id string, opts Options) (int64, error) {
	d.mu.Lock()
	e, ok := d.entries[id]
	if !ok {
		d.mu.Unlock()
		return 0, ErrUnknownSubscription
	}
	if d.stopping || !d.started {
		d.mu.Unlock()
		return 0, ErrStopping
	}
	sub := e.sub
	d.inflight.Add(1)
	d.mu.Unlock()
	if err := d.claim(sub.AccountName()); err != nil {
		d.inflight.Done()
		return 0, err
	}
	started := make(chan int64, 1)
	finished := make(chan error, 1)
	opts.Started = func(runID int64) { started <- runID }
	opts.Drain, opts.Scheduled = d.drain, false
	go func() {
		defer d.inflight.Done()
		_, err := d.once().Run(d.work, sub, opts)
		finished <- err
		d.afterRun(id)
	}()
	select {
	case runID := <-started:
		return runID, nil
	case err := <-finished:
		select {
		case runID := <-started:
			return runID, nil // it ran to its end before we looked
		default:
		}
		if err == nil {
			err = errors.New("subscription: the run ended without being recorded")
		}
		return 0, err
	}
}

// claim makes sure this daemon holds the account's lease, claiming it now
// if it is free, so a run it is asked for is never refused for a lease it
// could have had.
func (d *Daemon) claim(account string) error {
	if d.leases == nil || d.leases.Holds(account) {
		return nil
	}
	ctx, cancel := context.WithTimeout(d.work, 10*time.Second)
	defer cancel()
	ok, l, err := d.leases.Acquire(ctx, account)
	if err != nil {
		return fmt.Errorf("subscription: cannot claim the lease of account %s: %w", account, err)
	}
	if !ok {
		return &LeaseHeldError{Account: account, Holder: l.Owner}
	}
	return nil
}

// Reload applies a new configuration: added subscriptions are scheduled,
// removed ones unscheduled (their events stay in Google unless
// sync.prune_on_remove is set), changed ones use their new settings from
// their next run. A changed schedule reschedules everything.
func (d *Daemon) Reload(ctx context.Context, cfg *config.Config) error {
	d.mu.Lock()
	if d.stopping {
		d.mu.Unlock()
		return ErrStopping
	}
	base, err := config.CronParser.Parse(cfg.Schedule)
	if err != nil {
		d.mu.Unlock()
		return fmt.Errorf("subscription: schedule: %w", err)
	}
	old := d.cfg
	d.cfg = cfg
	d.runner.SetConfig(cfg)
	if cfg.Schedule != old.Schedule {
		d.cadence = NewCadence(base, d.runner.now())
		for id := range d.entries {
			d.table.remove(id)
			delete(d.entries, id)
		}
		d.warnNever()
	}
	want := map[string]config.Subscription{}
	for _, s := range cfg.Subscriptions {
		want[s.ID] = s
	}
	var added, removed, changed []string
	for id, e := range d.entries {
		s, ok := want[id]
		switch {
		case !ok:
			d.table.remove(id)
			delete(d.entries, id)
			removed = append(removed, id)
		default:
			if keys := changedKeys(e.sub, s); len(keys) > 0 {
				e.sub = s
				changed = append(changed, id+" ("+strings.Join(keys, ", ")+")")
			}
		}
	}
	for _, s := range cfg.Subscriptions {
		if _, ok := d.entries[s.ID]; !ok {
			d.add(ctx, s)
			added = append(added, s.ID)
		}
	}
	d.mu.Unlock()
	sort.Strings(added)
	sort.Strings(removed)
	sort.Strings(changed)
	d.log.Info("configuration reloaded", "added", added, "removed", removed, "changed", changed, "schedule", cfg.Schedule)
	// With prune_on_remove every reload also retries the prunes that
	// failed before.
	if len(removed) > 0 || cfg.Sync.PruneOnRemove {
		d.inflight.Add(1)
		go func() {
			defer d.inflight.Done()
			d.pruneRemoved(ctx, cfg)
		}()
	}
	return nil
}

// changedKeys names the configuration keys of a subscription whose values
// differ between a and b (the keys a presentation block inlines count as
// the subscription's own). Every key counts: a reload applies them all, and
// a run under a changed render policy reads the feed in full and writes
// what it changes, as a one-shot sync does.
func changedKeys(a, b config.Subscription) []string {
	var keys []string
	var walk func(va, vb reflect.Value)
	walk = func(va, vb reflect.Value) {
		t := va.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if opts == "inline" && f.Type.Kind() == reflect.Struct {
				walk(va.Field(i), vb.Field(i))
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
				keys = append(keys, name)
			}
		}
	}
	walk(reflect.ValueOf(a), reflect.ValueOf(b))
	return keys
}

// Shutdown stops scheduling and drains: running syncs start no new writes,
// the writes in flight finish and are persisted, and each run records its
// outcome (deferred: the rest is picked up next time). If ctx ends first,
// what is still running is cancelled, and Shutdown waits for it to record.
func (d *Daemon) Shutdown(ctx context.Context) error {
	d.mu.Lock()
	if !d.started || d.stopping {
		d.mu.Unlock()
		return nil
	}
	d.stopping = true
	tt := d.table
	d.mu.Unlock()
	tt.stop()
	close(d.drain)
	done := make(chan struct{})
	go func() {
		d.inflight.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
		d.log.Info("scheduler stopped; every run finished")
	case <-ctx.Done():
		d.log.Warn("shutdown deadline passed; cancelling the runs still going")
		d.cancelWork()
		<-done
		err = ctx.Err()
	}
	d.cancelWork()
	if d.leases != nil {
		d.stopLeases()
		d.leases.Release(context.WithoutCancel(ctx))
	}
	return err
}
