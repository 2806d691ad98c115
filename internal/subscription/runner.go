package subscription

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
)

// Fetcher fetches a feed: a Response with a Stream (read as it arrives,
// its hash given by Finish), or with the whole Body and its BodyHash.
type Fetcher interface {
	Open(ctx context.Context, req fetch.Request) (*fetch.Response, error)
}

// Writer applies a plan to Google for one account.
type Writer interface {
	Apply(ctx context.Context, b diff.Batch, p calsyncd.Persister) calsyncd.WriteResult
	ListOwned(ctx context.Context, calendarID, subscriptionID string) ([]diff.Owned, error)
	// CheckAccount asks Google whether it still takes the account's
	// credentials, sharing one cheap request among the passes of the
	// account that begin together; err (class auth) says it refused them,
	// or the calendar; rate limits are no verdict. answered: Google
	// answered.
	CheckAccount(ctx context.Context, subscriptionID, calendarID string) (answered bool, err error)
	// CalendarID is the id Google gives the calendar calendarID names
	// ("primary" is the account's address), "" when Google says the
	// account has no such calendar; an error means it is not known
	// (credentials refused, or no answer).
	CalendarID(ctx context.Context, calendarID string) (string, error)
	// Unsupported says why Google cannot hold ev as a recurring event, or
	// "" when it can (as far as is known before asking).
	Unsupported(ev *feed.Event) string
}

// Store is the state the runner reads and writes.
type Store interface {
	EnsureSubscription(ctx context.Context, id, calendar, account string) (calsyncd.SubscriptionState, error)
	SaveSubscription(ctx context.Context, st calsyncd.SubscriptionState) error
	Mappings(ctx context.Context, subscriptionID string) ([]calsyncd.Mapping, error)
	DeleteMappings(ctx context.Context, subscriptionID string) error
	Rejections(ctx context.Context, subscriptionID string) ([]calsyncd.Rejection, error)
	// Record commits changes together, before it returns.
	Record(ctx context.Context, subscriptionID string, changes ...calsyncd.Change) error
	// Queue hands changes to the store's group commit; Flush waits until
	// everything queued is committed and reports what of the
	// subscription's could not be.
	Queue(subscriptionID string, changes ...calsyncd.Change) error
	Flush(ctx context.Context, subscriptionID string) error
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
	// Owner names this installation in the marks and ids of the events it
	// writes; it must be the Owner the writers were given.
	Owner calsyncd.Owner
	// Writer returns the writer for a Google account.
	Writer func(account string) (Writer, error)
	// Locker, when set, keeps other processes from running the same
	// subscription at the same time.
	Locker Locker
	// Workers, when set, bounds how many passes run at once, per account
	// and in fetch+parse; without it every pass runs at once.
	Workers *Workers
	// Observer, when set, is told about fetches and runs (metrics).
	Observer Observer
	// Listener, when set, is told what each run settled on (alerts).
	Listener Listener
	Log      *slog.Logger
	Now      func() time.Time
	// FilterClock times the filters against limits.filter_time (nil:
	// time.Now; tests make matching slow without making it so).
	FilterClock func() time.Time

	mu        sync.Mutex
	running   map[string]bool
	lockFiles sync.Mutex
}

// Options modify one sync. The operator's options (every field JSON
// encodes) travel whole when `calsyncd sync` hands a subscription to a
// running daemon (status.HandOff), and a daemon refuses an option it does
// not know rather than drop it; the process's own (json:"-") stay behind.
type Options struct {
	// AllowDeletes releases deletes held by the mass-delete guard.
	AllowDeletes bool `json:"allow_deletes,omitempty"`
	// Reconcile compares Google with our mappings even if it is not due.
	Reconcile bool `json:"reconcile,omitempty"`
	// Started, when set, is called with the run's id as soon as it is
	// recorded.
	Started func(runID int64) `json:"-"`
	// Scheduled runs respect the feed server's Retry-After; runs an
	// operator asked for do not.
	Scheduled bool `json:"-"`
	// Drain, when closed, stops the run from starting new writes (shutdown);
	// writes in flight finish and are persisted.
	Drain <-chan struct{} `json:"-"`
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
	// KeptDeletes and KeptUpdates are the deletes and updates the
	// subscription's write policy kept from Google (deletes: never,
	// updates: never), in the run's last round.
	KeptDeletes, KeptUpdates int
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
	switch {
	case errors.Is(err, ErrBusy):
		return Report{Subscription: sub.ID}, err
	case err != nil:
		// The lock could not even be tried (an unwritable state
		// directory): that is this run's failure, and recorded as one,
		// so that the status and the state machine see it.
		return r.refuse(ctx, sub, opts, err)
	}
	defer unlock()
	return r.sync(ctx, sub, opts)
}

// refuse records a run that could not start, failed with cause.
func (r *Runner) refuse(ctx context.Context, sub config.Subscription, opts Options, cause error) (Report, error) {
	p, err := r.begin(ctx, sub, opts, false)
	if err != nil {
		return Report{Subscription: sub.ID}, errors.Join(cause, err)
	}
	p.end = stop(calsyncd.OutcomeFailed, cause)
	return r.settle(ctx, p)
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
	// One lock-file operation at a time: each is a blocking system call,
	// and a thousand subscriptions starting at once would otherwise hold
	// as many OS threads.
	r.lockFiles.Lock()
	unlock, err := r.Locker.TryLock(id)
	r.lockFiles.Unlock()
	if err != nil {
		release()
		return nil, err
	}
	return func() {
		r.lockFiles.Lock()
		unlock()
		r.lockFiles.Unlock()
		release()
	}, nil
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

func (r *Runner) observeFetch(id, result string) {
	if r.Observer != nil {
		r.Observer.FeedFetched(id, result)
	}
}

// rekey moves mappings to their events' new keys (same content, new UID),
// all in one transaction.
func (r *Runner) rekey(ctx context.Context, sub string, rekeys []diff.Rekey) error {
	changes := make([]calsyncd.Change, 0, 2*len(rekeys))
	for _, rk := range rekeys {
		m := rk.From
		m.Key = rk.To
		changes = append(changes, calsyncd.MappingSaved(m), calsyncd.MappingDeleted(rk.From.Key))
	}
	return r.Store.Record(context.WithoutCancel(ctx), sub, changes...)
}

// expansionReach bounds, each way from now, the occurrences of a series
// written as standalone events when the window is open on that side.
const expansionReach = 365 * 24 * time.Hour

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

// duplicateSweeper persists nothing: deleting a duplicate copy must not
// forget the mapping of the copy we keep.
type duplicateSweeper struct{}

func (duplicateSweeper) Saved(context.Context, calsyncd.Mapping) error      { return nil }
func (duplicateSweeper) Deleted(context.Context, calsyncd.Key) error        { return nil }
func (duplicateSweeper) Rejected(context.Context, calsyncd.Rejection) error { return nil }

// persister queues what the writer reports for the store's group commit;
// the pass flushes it when the batch is done. Queueing never waits for the
// disk, and never for the run's context: a write Google has accepted is
// recorded even while the daemon shuts down (a crash loses at most the
// commit window, recovered from Google by the next run's 409s).
type persister struct {
	store Store
	sub   string
}

func (p *persister) Saved(_ context.Context, m calsyncd.Mapping) error {
	return p.store.Queue(p.sub, calsyncd.MappingSaved(m))
}

func (p *persister) Deleted(_ context.Context, k calsyncd.Key) error {
	return p.store.Queue(p.sub, calsyncd.MappingDeleted(k))
}

func (p *persister) Rejected(_ context.Context, rj calsyncd.Rejection) error {
	return p.store.Queue(p.sub, calsyncd.RejectionSaved(rj))
}

// flush waits for what the batch queued to be committed.
func (p *persister) flush(ctx context.Context) error {
	return p.store.Flush(context.WithoutCancel(ctx), p.sub)
}
