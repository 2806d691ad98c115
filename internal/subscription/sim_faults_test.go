package subscription_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// The simulation's faults and what it checks of Google: a store that
// dies mid-run, and the write policy's promises.

func policyValue(never bool) *string {
	v := config.WriteMirror
	if never {
		v = config.WriteNever
	}
	return &v
}

// snapshot notes our events before a step: their UIDs, in either
// calendar, and each one's content by id.
func (w *simWorld) snapshot() {
	w.ours, w.content = map[string]bool{}, map[string]string{}
	for _, cal := range []string{simAddress, simMoved} {
		for _, ev := range w.h.fake.Events(cal) {
			if gcalwriter.Owned(ev, w.h.owner, "team") && ev.Status != "cancelled" {
				w.ours[ev.ExtendedProperties.Private[gcalwriter.PropUID]] = true
				w.content[cal+" "+ev.Id] = simContent(ev)
			}
		}
	}
}

// simContent is what the feed writes of an event.
func simContent(ev *calendar.Event) string {
	var start string
	if ev.Start != nil {
		start = ev.Start.Date + ev.Start.DateTime
	}
	return ev.Summary + " | " + start + " | " + ev.Description + " | " + ev.Location
}

// policyViolation checks the write policy the step ran under: under
// deletes: never no event of ours left Google (a copy stays of every
// UID, in either calendar), under updates: never none changed content.
func (w *simWorld) policyViolation() string {
	if w.neverDelete {
		now := map[string]bool{}
		for _, cal := range []string{simAddress, simMoved} {
			for u := range w.ownedIn(cal) {
				now[u] = true
			}
		}
		for u := range w.ours {
			if !now[u] {
				return fmt.Sprintf("under deletes: never, a run deleted our %s", u)
			}
		}
	}
	if w.neverUpdate {
		for _, cal := range []string{simAddress, simMoved} {
			for _, ev := range w.h.fake.Events(cal) {
				was, ok := w.content[cal+" "+ev.Id]
				if ok && ev.Status != "cancelled" && simContent(ev) != was {
					return fmt.Sprintf("under updates: never, a run changed our %s from %q to %q", ev.Id, was, simContent(ev))
				}
			}
		}
	}
	return ""
}

// errKilled is what a killed process's store answers.
var errKilled = errors.New("sim: the process was killed")

// killStore lets the first changes reach the store and then none: the
// process died with Google's answers in hand.
type killStore struct {
	subscription.Store
	mu     sync.Mutex
	left   int
	dead   bool
	cancel context.CancelFunc
}

func (k *killStore) take(n int) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.dead && n > k.left {
		k.dead = true
		k.cancel()
	}
	if k.dead {
		return false
	}
	k.left -= n
	return true
}

func (k *killStore) Record(ctx context.Context, sub string, changes ...calsyncd.Change) error {
	if !k.take(len(changes)) {
		return errKilled
	}
	return k.Store.Record(ctx, sub, changes...)
}

func (k *killStore) Queue(sub string, changes ...calsyncd.Change) error {
	if !k.take(len(changes)) {
		return errKilled
	}
	return k.Store.Queue(sub, changes...)
}

func (k *killStore) Flush(ctx context.Context, sub string) error {
	if !k.take(0) {
		return errKilled
	}
	return k.Store.Flush(ctx, sub)
}

func (k *killStore) SaveSubscription(ctx context.Context, st calsyncd.SubscriptionState) error {
	if !k.take(0) {
		return errKilled
	}
	return k.Store.SaveSubscription(ctx, st)
}

func (k *killStore) FinishRun(ctx context.Context, r calsyncd.Run) error {
	if !k.take(0) {
		return errKilled
	}
	return k.Store.FinishRun(ctx, r)
}

// killed runs the step's sync in a process killed after s.N%5 changes were
// committed, then starts a new process on what reached the disk. Its run
// promises nothing but what the invariants about others' events say.
func (w *simWorld) killed(t *testing.T, s simStep, opts subscription.Options) simRun {
	h := w.h
	w.setFeed()
	// Something to write: the feed changes with the step.
	w.feed[fmt.Sprintf("k%d@example.com", s.ID)] = fmt.Sprintf("Event k%d", s.ID)
	w.setFeed()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ks := &killStore{Store: h.runner.Store, left: s.N % 5, cancel: cancel}
	h.runner.Store = ks // the process ends with this step: open() makes a new one
	rep, _ := h.runner.Sync(ctx, h.cfg.Subscriptions[0], opts)
	h.store.Close()
	h.open()
	// What a killed run did is not a clean run's; what it wrote unrecorded
	// is found by the next run's reconcile, but one the feed has dropped
	// meanwhile is held as adopted (as after a lost database).
	w.strays = true
	return simRun{rep: rep, faults: true}
}
