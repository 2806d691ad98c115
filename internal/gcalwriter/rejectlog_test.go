package gcalwriter_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// TestRejectionsAreSampledInTheLog: a batch of many events Google refuses
// logs the first ten one by one and counts the rest in its line (issue 15:
// warnings of one kind must not flood the log).
func TestRejectionsAreSampledInTheLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		var ops []diff.Op
		for i := range 50 {
			bad := event(fmt.Sprintf("bad%02d@example.com", i), "Bad")
			bad.Recurrence = []string{"RRULE:NOPE"}
			bad.Hash = bad.ComputeHash()
			ops = append(ops, create(bad))
		}
		res := apply(t, w, newMem(), ops...)
		if res.Rejected != 50 {
			t.Fatalf("rejected %d, want 50", res.Rejected)
		}
		logs := h.logs.String()
		if n := strings.Count(logs, "event rejected by Google"); n != 10 {
			t.Errorf("%d rejection lines for 50 refused events, want 10", n)
		}
		if !strings.Contains(logs, "rejected=50") || !strings.Contains(logs, "rejections_logged=10") {
			t.Errorf("the batch line does not count them all:\n%s", logs)
		}
	})
}
