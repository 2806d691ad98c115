package subscription

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Locker keeps two processes (the daemon and a `calsyncd sync` started by
// hand) from running the same subscription at once.
type Locker interface {
	// TryLock takes the subscription's lock or returns ErrBusy.
	TryLock(id string) (unlock func(), err error)
}

// FileLocker locks with flock(2) on a file per subscription. The kernel drops
// the lock when the process dies, even by SIGKILL, so a crash never leaves a
// subscription locked.
type FileLocker struct {
	Dir string
}

// TryLock implements Locker.
func (l FileLocker) TryLock(id string) (func(), error) {
	if err := os.MkdirAll(l.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("subscription: lock directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(l.Dir, id+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("subscription: lock %s: %w", id, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("subscription: lock %s: %w", id, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// Probe checks that the lock directory can be written, as every run's
// lock needs; the status endpoint's /healthz asks it, so an unwritable
// state directory is not "ok".
func (l FileLocker) Probe() error {
	if err := os.MkdirAll(l.Dir, 0o700); err != nil {
		return fmt.Errorf("subscription: lock directory: %w", err)
	}
	f, err := os.CreateTemp(l.Dir, ".probe-*")
	if err != nil {
		return fmt.Errorf("subscription: lock directory: %w", err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
