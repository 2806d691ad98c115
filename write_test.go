package calsyncd_test

import (
	"errors"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

func TestWriteResultAdd(t *testing.T) {
	first := calsyncd.WriteResult{Created: 2, Rejected: 1, Unparented: 3, Retries: 1, Waited: time.Second,
		ByClass:       map[calsyncd.ErrorClass]int{calsyncd.ClassInvalid: 1},
		RefusedSeries: []calsyncd.Key{{UID: "s"}}, Rejections: []calsyncd.Rejection{{Key: calsyncd.Key{UID: "s"}}},
		Mapped: []calsyncd.Mapping{{Key: calsyncd.Key{UID: "a"}}}, ThrottleUntil: time.Unix(1, 0), ThrottleClass: calsyncd.ClassUsageLimited}
	second := calsyncd.WriteResult{Created: 5, Deferred: 1, ByClass: map[calsyncd.ErrorClass]int{calsyncd.ClassInvalid: 2, calsyncd.ClassRateLimited: 1},
		Mapped: []calsyncd.Mapping{{Key: calsyncd.Key{UID: "b"}}}, Unmapped: []calsyncd.Key{{UID: "c"}}, Err: errors.New("stop")}
	got := first.Reshaped().Add(second)
	if got.Created != 7 || got.Rejected != 0 || got.Unparented != 0 || got.Deferred != 1 || got.Retries != 1 || got.Waited != time.Second {
		t.Errorf("counts: %+v", got)
	}
	if got.ByClass[calsyncd.ClassInvalid] != 3 || got.ByClass[calsyncd.ClassRateLimited] != 1 || first.ByClass[calsyncd.ClassInvalid] != 1 {
		t.Errorf("by class %v (first's own map must not change: %v)", got.ByClass, first.ByClass)
	}
	if len(got.Mapped) != 2 || len(got.Unmapped) != 1 || len(got.Rejections) != 1 || len(got.RefusedSeries) != 1 {
		t.Errorf("lists: %+v", got)
	}
	if !got.ThrottleUntil.IsZero() || got.ThrottleClass != "" || got.Err == nil {
		t.Errorf("the later window and the first error stand: %v %v", got.ThrottleUntil, got.Err)
	}
}
