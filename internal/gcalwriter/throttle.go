package gcalwriter

import (
	"context"
	"fmt"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// AccountMemory keeps an account's throttle window and learned spacing
// across restarts, so a restarted daemon (or a one-shot `calsyncd sync`)
// does not hammer an account Google has just throttled. *store.Store
// satisfies it.
type AccountMemory interface {
	Account(ctx context.Context, name string) (calsyncd.AccountState, error)
	SaveAccount(ctx context.Context, a calsyncd.AccountState) error
}

// window is the account's throttle window: until it closes, every write for
// the account is deferred without asking Google.
type window struct {
	until time.Time
	class calsyncd.ErrorClass
	// level counts the windows opened in a row (drives the doubling); the
	// next success resets it.
	level int
}

// AccountStatus is what the status page shows of an account's writer.
type AccountStatus struct {
	Account string
	// Spacing is the pacer's current spacing between request starts;
	// SpacingFloor the configured one it decays back to.
	Spacing      time.Duration
	SpacingFloor time.Duration
	// ThrottleUntil is when the open throttle window closes (zero when none
	// is open); ThrottleClass why it opened; ThrottleLevel how many opened
	// in a row since the last success.
	ThrottleUntil time.Time
	ThrottleClass calsyncd.ErrorClass
	ThrottleLevel int
	InFlight      int
	Waiting       int
}

// State reports the account's pacing and throttling now.
func (w *Writer) State() AccountStatus {
	ps := w.pacer.State()
	now := w.clock.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	st := AccountStatus{Account: w.o.Account, Spacing: ps.Spacing, SpacingFloor: ps.Floor, ThrottleLevel: w.win.level,
		InFlight: ps.InFlight, Waiting: ps.Waiting}
	if now.Before(w.win.until) {
		st.ThrottleUntil, st.ThrottleClass = w.win.until, w.win.class
	}
	return st
}

// Load reads the account's throttle memory, if it has not been read yet.
// Apply calls it; call it earlier to show the state before the first run.
func (w *Writer) Load(ctx context.Context) error {
	w.loadMu.Lock()
	defer w.loadMu.Unlock()
	if w.loaded || w.o.Memory == nil {
		return nil
	}
	st, err := w.o.Memory.Account(ctx, w.o.Account)
	if err != nil {
		return fmt.Errorf("gcalwriter: load throttle memory of %s: %w", w.o.Account, err)
	}
	w.loaded = true
	if st.Spacing > 0 {
		w.pacer.SetSpacing(st.Spacing)
	}
	w.mu.Lock()
	w.win = window{until: st.ThrottleUntil, class: st.ThrottleClass, level: st.ThrottleLevel}
	w.remembered = st
	w.mu.Unlock()
	return nil
}

// remember persists the throttle memory when it changed since last saved.
func (w *Writer) remember(ctx context.Context) {
	if w.o.Memory == nil {
		return
	}
	w.loadMu.Lock()
	defer w.loadMu.Unlock()
	if !w.loaded {
		// Saving before a successful load would overwrite what is there.
		return
	}
	spacing := w.pacer.State().Spacing.Truncate(time.Millisecond)
	w.mu.Lock()
	st := calsyncd.AccountState{Name: w.o.Account, ThrottleUntil: w.win.until, ThrottleClass: w.win.class,
		ThrottleLevel: w.win.level, Spacing: spacing}
	same := st.ThrottleUntil.Equal(w.remembered.ThrottleUntil) && st.ThrottleClass == w.remembered.ThrottleClass &&
		st.ThrottleLevel == w.remembered.ThrottleLevel && st.Spacing == w.remembered.Spacing
	w.mu.Unlock()
	if same {
		return
	}
	if err := w.o.Memory.SaveAccount(context.WithoutCancel(ctx), st); err != nil {
		w.log.Warn("cannot save the account's throttle memory", "error", err)
		return
	}
	w.mu.Lock()
	w.remembered = st
	w.mu.Unlock()
}

func (w *Writer) jitter() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rng.Float64()
}

// throttled reports whether the account's throttle window is open at now.
func (w *Writer) throttled(now time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.win.until, now.Before(w.win.until)
}

// throttledBy is throttled with the reason the window opened for.
func (w *Writer) throttledBy(now time.Time) (time.Time, calsyncd.ErrorClass, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.win.until, w.win.class, now.Before(w.win.until)
}

// openWindow opens (or escalates) the account's throttle window after c and
// defers what every running batch of the account has left.
func (w *Writer) openWindow(ctx context.Context, c Classification) {
	class := c.Class
	if class != calsyncd.ClassUsageLimited {
		class = calsyncd.ClassRateLimited
	}
	now := w.clock.Now()
	jitter := w.jitter()
	w.mu.Lock()
	open := now.Before(w.win.until)
	escalate := !open || (class == calsyncd.ClassUsageLimited && w.win.class != calsyncd.ClassUsageLimited)
	if escalate {
		level := w.win.level + 1
		if w.win.class != class {
			level = 1
		}
		until := throttleUntil(c, level, jitter, now, w.o.RateWindow, w.o.RateWindowCap)
		// Whole milliseconds, as the store keeps it: a restart sees the
		// same window.
		if r := until.Truncate(time.Millisecond); !r.Equal(until) {
			until = r.Add(time.Millisecond)
		}
		w.win = window{until: until, class: class, level: level}
	}
	win := w.win
	batches := make([]*batchRun, 0, len(w.batches))
	for b := range w.batches {
		batches = append(batches, b)
	}
	w.mu.Unlock()
	for _, b := range batches {
		b.stop(errThrottled)
	}
	if escalate {
		w.log.Warn("Google throttled the account: deferring its writes", "class", string(class), "code", c.Code,
			"reason", c.Reason, "until", win.until.UTC().Format(time.RFC3339), "level", win.level)
		w.remember(ctx)
	}
}

// succeeded closes the throttle memory after a success once the window has
// elapsed (a success of a request sent before the window opened says
// nothing).
func (w *Writer) succeeded(now time.Time) {
	w.mu.Lock()
	closed := w.win
	if w.win.level > 0 && !now.Before(w.win.until) {
		w.win = window{}
	} else {
		closed = window{}
	}
	w.mu.Unlock()
	if closed.level > 0 {
		w.log.Info("throttle window closed: Google takes the account's writes again", "class", string(closed.class),
			"windows_in_a_row", closed.level)
	}
}
