package subscription_test

import (
	"errors"
	"testing"

	"github.com/calsyncd/calsyncd/internal/subscription"
)

func TestFileLockerExcludesOtherHolders(t *testing.T) {
	dir := t.TempDir()
	a, b := subscription.FileLocker{Dir: dir}, subscription.FileLocker{Dir: dir}
	unlock, err := a.TryLock("team")
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to open file descriptions: a second open, as another
	// process would make, is refused.
	if _, err := b.TryLock("team"); !errors.Is(err, subscription.ErrBusy) {
		t.Fatalf("second lock = %v, want ErrBusy", err)
	}
	if u, err := b.TryLock("other"); err != nil {
		t.Fatalf("another subscription: %v", err)
	} else {
		u()
	}
	unlock()
	u, err := b.TryLock("team")
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	u()
}
