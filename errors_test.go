package calsyncd_test

import (
	"errors"
	"fmt"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
)

type classed struct{ class calsyncd.ErrorClass }

func (e classed) Error() string                   { return "classed" }
func (e classed) ErrorClass() calsyncd.ErrorClass { return e.class }

func TestClassOf(t *testing.T) {
	sentinel := calsyncd.NewError(calsyncd.ClassFeedInvalid, "not a calendar")
	tests := map[string]struct {
		err  error
		want calsyncd.ErrorClass
	}{
		"nil":               {nil, calsyncd.ClassNone},
		"unclassed":         {errors.New("disk full"), calsyncd.ClassInternal},
		"sentinel":          {sentinel, calsyncd.ClassFeedInvalid},
		"wrapped sentinel":  {fmt.Errorf("parse: %w", sentinel), calsyncd.ClassFeedInvalid},
		"outermost wins":    {classed{calsyncd.ClassAuth}, calsyncd.ClassAuth},
		"wrapped classed":   {fmt.Errorf("run: %w", classed{calsyncd.ClassTransient}), calsyncd.ClassTransient},
		"joined, first one": {errors.Join(errors.New("x"), classed{calsyncd.ClassRateLimited}), calsyncd.ClassRateLimited},
	}
	for name, tt := range tests {
		if got := calsyncd.ClassOf(tt.err); got != tt.want {
			t.Errorf("%s: ClassOf = %q, want %q", name, got, tt.want)
		}
	}
	if !errors.Is(fmt.Errorf("x: %w", sentinel), sentinel) {
		t.Error("a classed sentinel must still match errors.Is")
	}
}

func TestErrorClassIsFeed(t *testing.T) {
	for c, want := range map[calsyncd.ErrorClass]bool{
		calsyncd.ClassFeedInvalid: true, calsyncd.ClassFeedTooLarge: true, "feed_new_kind": true,
		calsyncd.ClassAuth: false, calsyncd.ClassInternal: false, "feed_": false, calsyncd.ClassNone: false,
	} {
		if c.IsFeed() != want {
			t.Errorf("%q.IsFeed() = %v, want %v", c, !want, want)
		}
	}
}

// TestErrorClassAuthenticated: the answers that show Google took the
// credentials are those it gives only to an authenticated request.
func TestErrorClassAuthenticated(t *testing.T) {
	for c, want := range map[calsyncd.ErrorClass]bool{
		calsyncd.ClassRateLimited: true, calsyncd.ClassUsageLimited: true, calsyncd.ClassGone: true,
		calsyncd.ClassConflict: true, calsyncd.ClassPrecondition: true, calsyncd.ClassInvalid: true,
		calsyncd.ClassAuth: false, calsyncd.ClassTransient: false, calsyncd.ClassCanceled: false,
		calsyncd.ClassNone: false, calsyncd.ClassInternal: false, calsyncd.ClassFeedRejected: false,
	} {
		if got := c.Authenticated(); got != want {
			t.Errorf("%q.Authenticated() = %v, want %v", c, got, want)
		}
	}
}
