package subscription_test

import (
	"context"
	"sync/atomic"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/fetch"
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

// notModified answers every fetch 304.
type notModified struct{}

func (notModified) Open(context.Context, fetch.Request) (*fetch.Response, error) {
	return &fetch.Response{NotModified: true}, nil
}

// A pass whose feed has not changed (the server answers 304, or sends the
// body of the last complete run again) reads no mappings: nothing will be
// planned.
func TestAnUnchangedFeedReadsNoMappings(t *testing.T) {
	m := newMirror(t)
	counted := &countingStore{Store: m.store}
	m.runner.Store = counted
	m.setFeed(generated["series Google cannot hold"])
	m.syncOK("first sync")
	for _, tc := range []struct {
		name    string
		fetcher subscription.Fetcher
	}{
		{"same body", m.runner.Fetcher},
		{"304", notModified{}},
	} {
		m.runner.Fetcher = tc.fetcher
		counted.mappings.Store(0)
		counted.rejections.Store(0)
		rep := m.syncWith(subscription.Options{})
		if rep.Run.Outcome != calsyncd.OutcomeNotModified {
			t.Fatalf("%s: outcome %s (%v)", tc.name, rep.Run.Outcome, rep.Err)
		}
		if n, r := counted.mappings.Load(), counted.rejections.Load(); n != 0 || r != 0 {
			t.Errorf("%s: read the mappings %d times and the rejections %d times, want never", tc.name, n, r)
		}
	}
}
