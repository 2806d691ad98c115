package subscription_test

import (
	"math/rand/v2"
	"testing"
)

func TestZZHunt(t *testing.T) {
	kinds := []string{"replace", "lostdb", "replace", "add", "5xx", "move", "shrink"}
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 300; trial++ {
		seq := make([]simStep, len(kinds))
		for i, k := range kinds {
			seq[i] = simStep{Kind: k, N: 1 + rng.IntN(30), ID: i}
		}
		if at, why := simulateIn(t, "hunt", seq); at >= 0 {
			t.Fatalf("trial %d: %v at %d: %s", trial, seq, at, why)
		}
	}
}
