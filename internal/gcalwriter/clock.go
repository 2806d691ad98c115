package gcalwriter

import (
	"context"
	"time"
)

// Clock is the time the writer paces, backs off and throttles by. The
// default is the time package, which testing/synctest fakes; a benchmark
// that cannot use synctest injects its own.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has elapsed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not happened yet.
	Stop() bool
}

type systemClock struct{}

func (systemClock) Now() time.Time                            { return time.Now() }
func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// sleep waits for d on c, or until ctx is done (returning its cause).
func sleep(ctx context.Context, c Clock, d time.Duration) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	done := make(chan struct{})
	t := c.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		t.Stop()
		return context.Cause(ctx)
	}
}
