package gcalwriter

import (
	"testing"
	"time"

	"github.com/calsyncd/calsyncd"
)

func TestDecide(t *testing.T) {
	o := Options{RetryBase: time.Second, RetryCap: time.Minute, MaxAttempts: 3, MaxRetryWait: 10 * time.Second}
	rl := Classification{Class: calsyncd.ClassRateLimited}
	tr := Classification{Class: calsyncd.ClassTransient}
	cases := []struct {
		name string
		c    Classification
		bud  budget
		kind verdictKind
		wait time.Duration
	}{
		{"rate limit, first", rl, budget{}, verdictRetry, Backoff(o.RetryBase, o.RetryCap, 1, 0, 0)},
		{"transient, first", tr, budget{}, verdictRetry, Backoff(o.RetryBase, o.RetryCap, 1, 0, 0)},
		{"rate limit, last attempt", rl, budget{attempts: 2}, verdictThrottle, 0},
		{"transient, last attempt", tr, budget{attempts: 2}, verdictFail, 0},
		{"rate limit, wait budget spent", rl, budget{waited: 10 * time.Second}, verdictThrottle, 0},
		{"transient, wait budget spent", tr, budget{waited: 10 * time.Second}, verdictFail, 0},
		{"transient, Retry-After over budget", Classification{Class: calsyncd.ClassTransient, RetryAfter: 11 * time.Second}, budget{}, verdictFail, 0},
		{"rate limit, Retry-After within budget", Classification{Class: calsyncd.ClassRateLimited, RetryAfter: 5 * time.Second}, budget{}, verdictRetry, Backoff(o.RetryBase, o.RetryCap, 1, 0, 5*time.Second)},
		{"usage limit", Classification{Class: calsyncd.ClassUsageLimited}, budget{}, verdictThrottle, 0},
		{"401, first", Classification{Class: calsyncd.ClassAuth, Code: 401}, budget{}, verdictRetry, 0},
		{"401, after re-auth", Classification{Class: calsyncd.ClassAuth, Code: 401}, budget{reauthed: true}, verdictFail, 0},
		{"403 auth", Classification{Class: calsyncd.ClassAuth, Code: 403}, budget{}, verdictFail, 0},
		{"invalid", Classification{Class: calsyncd.ClassInvalid}, budget{}, verdictFail, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := decide(tc.c, tc.bud, o, 0)
			if v.Kind != tc.kind || v.Wait != tc.wait {
				t.Errorf("decide = kind %d wait %s, want kind %d wait %s", v.Kind, v.Wait, tc.kind, tc.wait)
			}
		})
	}
	if v := decide(Classification{Class: calsyncd.ClassAuth, Code: 401}, budget{}, o, 0); !v.Budget.reauthed {
		t.Error("the re-auth is not recorded in the budget")
	}
	if v := decide(rl, budget{attempts: 1}, o, 0); v.Budget.attempts != 2 {
		t.Errorf("attempts after a retry = %d, want 2", v.Budget.attempts)
	}
}
