package subscription_test

import (
	"context"
	"sync/atomic"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// countingStore counts the reads of mappings and rejections.
type countingStore struct {
	subscription.Store
	mappings, rejections atomic.Int32
}

func (s *countingStore) Mappings(ctx context.Context, id string) ([]calsyncd.Mapping, error) {
	s.mappings.Add(1)
	return s.Store.Mappings(ctx, id)
}

func (s *countingStore) Rejections(ctx context.Context, id string) ([]calsyncd.Rejection, error) {
	s.rejections.Add(1)
	return s.Store.Rejections(ctx, id)
}

// TestAPassReadsTheMappingsOnce: one pass reads the mappings and the
// rejections once, however many stages change them — a reconcile, a
// series Google refuses and the second round that writes it as single
// events — and still plans the next run against what the store holds.
func TestAPassReadsTheMappingsOnce(t *testing.T) {
	m := newMirror(t)
	counted := &countingStore{Store: m.store}
	m.runner.Store = counted
	m.setFeed(generated["series Google cannot hold"])
	for i, what := range []string{"first sync, reconciling, with a refused series", "second sync"} {
		counted.mappings.Store(0)
		counted.rejections.Store(0)
		rep, writes := m.syncOK(what)
		if n, r := counted.mappings.Load(), counted.rejections.Load(); n != 1 || r != 1 {
			t.Errorf("%s: read the mappings %d times and the rejections %d times, want once each", what, n, r)
		}
		if i == 0 && (rep.Run.Created != 9+5 || rep.Run.Rejected != 0) {
			t.Errorf("%s: run %+v", what, rep.Run)
		}
		if i == 1 && writes != 0 {
			t.Errorf("%s: %d writes: the pass's view of the store drifted from the store", what, writes)
		}
	}
	m.check("after two passes")
}
