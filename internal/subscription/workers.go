package subscription

import (
	"context"
	"errors"
	"runtime"
	"sync"
)

// Workers bounds what one process does at once, however many
// subscriptions it runs: passes of one Google account run at most
// PerAccount at a time (the account's pacer has that many requests in
// flight; more passes would only queue in it, each holding its parsed
// feed), and at most Prepare passes fetch and parse at once (the CPU and
// memory heavy part). A pass waiting for either holds only its run's
// record; its goroutine blocks on a channel, not on an OS thread.
type Workers struct {
	perAccount int
	prepare    chan struct{}

	mu       sync.Mutex
	accounts map[string]*lane
}

// lane is one account's slots, and how many passes hold or wait for them.
type lane struct {
	slots chan struct{}
	users int
}

// NewWorkers returns bounds of perAccount passes per account and prepare
// fetches-and-parses at once (at least one each).
func NewWorkers(perAccount, prepare int) *Workers {
	return &Workers{perAccount: max(perAccount, 1), prepare: make(chan struct{}, max(prepare, 1)),
		accounts: map[string]*lane{}}
}

// PerAccount is how many passes of one account run at once: n, when
// nothing bounds them (no Workers).
func (w *Workers) PerAccount(n int) int {
	if w == nil {
		return n
	}
	return w.perAccount
}

// DefaultPrepare is the default bound on fetch+parse: two per core, so a
// slow feed server does not idle a core.
func DefaultPrepare() int { return 2 * runtime.GOMAXPROCS(0) }

// errDrained is why a pass that was still waiting for its turn did not run.
var errDrained = errors.New("subscription: shutting down before the pass had its turn")

// account waits for a slot of the account's lane; release gives it back.
func (w *Workers) account(ctx context.Context, drain <-chan struct{}, name string) (release func(), err error) {
	if w == nil {
		return func() {}, nil
	}
	w.mu.Lock()
	l := w.accounts[name]
	if l == nil {
		l = &lane{slots: make(chan struct{}, w.perAccount)}
		w.accounts[name] = l
	}
	l.users++
	w.mu.Unlock()
	leave := func() {
		w.mu.Lock()
		if l.users--; l.users == 0 {
			delete(w.accounts, name)
		}
		w.mu.Unlock()
	}
	if err := acquire(ctx, drain, l.slots); err != nil {
		leave()
		return nil, err
	}
	return func() { <-l.slots; leave() }, nil
}

// preparing waits for a fetch+parse slot; release gives it back.
func (w *Workers) preparing(ctx context.Context, drain <-chan struct{}) (release func(), err error) {
	if w == nil {
		return func() {}, nil
	}
	if err := acquire(ctx, drain, w.prepare); err != nil {
		return nil, err
	}
	return func() { <-w.prepare }, nil
}

func acquire(ctx context.Context, drain <-chan struct{}, slots chan struct{}) error {
	select {
	case slots <- struct{}{}:
		return nil
	default:
	}
	select {
	case slots <- struct{}{}:
		return nil
	case <-drain:
		return errDrained
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
