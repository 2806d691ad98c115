package store_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
)

// TestClaimOwnerKeepsTheDatabasesName: the first claim takes the host name;
// a later claim under another host name (a renamed host) keeps the
// database's name; a configured name replaces it and the replaced one
// stays recognised; Owner reads the same answer without writing.
func TestClaimOwnerKeepsTheDatabasesName(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		ctx := context.Background()
		s := db.open(t)
		steps := []struct {
			configured, host string
			want             calsyncd.Owner
		}{
			{"", "alpha", calsyncd.Owner{Name: "alpha"}},
			{"", "beta", calsyncd.Owner{Name: "alpha"}},
			{"prod", "beta", calsyncd.Owner{Name: "prod", Former: []string{"alpha"}}},
			{"", "gamma", calsyncd.Owner{Name: "prod", Former: []string{"alpha"}}},
			{"alpha", "gamma", calsyncd.Owner{Name: "alpha", Former: []string{"prod"}}},
		}
		for i, st := range steps {
			peek, err := s.Owner(ctx, st.configured, st.host)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.ClaimOwner(ctx, st.configured, st.host)
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != st.want.Name || !slices.Equal(got.Former, st.want.Former) {
				t.Errorf("step %d: ClaimOwner(%q, %q) = %+v, want %+v", i, st.configured, st.host, got, st.want)
			}
			if peek.Name != got.Name || !slices.Equal(peek.Former, got.Former) {
				t.Errorf("step %d: Owner (read-only) = %+v, ClaimOwner = %+v", i, peek, got)
			}
		}
	})
}

// TestOwnerWritesNothing: Owner on an empty database answers the fallback
// and leaves no name behind, so a later claim under another name wins.
func TestOwnerWritesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		ctx := context.Background()
		s := db.open(t)
		if o, err := s.Owner(ctx, "", "alpha"); err != nil || o.Name != "alpha" || len(o.Former) != 0 {
			t.Fatalf("Owner = %+v, %v", o, err)
		}
		if o, err := s.ClaimOwner(ctx, "", "beta"); err != nil || o.Name != "beta" || len(o.Former) != 0 {
			t.Fatalf("ClaimOwner after a read-only Owner = %+v, %v; want beta alone", o, err)
		}
	})
}

// TestReplicasAgreeOnOneOwner: replicas of other host names starting at
// once on one database all settle on one name.
func TestReplicasAgreeOnOneOwner(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db testDB) {
		ctx := context.Background()
		stores := make([]interface {
			ClaimOwner(context.Context, string, string) (calsyncd.Owner, error)
		}, 4)
		for i := range stores {
			stores[i] = db.open(t)
		}
		names := make([]string, len(stores))
		var wg sync.WaitGroup
		for i, s := range stores {
			wg.Go(func() {
				o, err := s.ClaimOwner(ctx, "", []string{"h0", "h1", "h2", "h3"}[i])
				if err != nil {
					t.Error(err)
				}
				names[i] = o.Name
			})
		}
		wg.Wait()
		for _, n := range names[1:] {
			if n != names[0] {
				t.Fatalf("replicas settled on different owners: %v", names)
			}
		}
	})
}
