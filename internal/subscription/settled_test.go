package subscription_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// listener records what settle hands on.
type listener struct {
	mu  sync.Mutex
	got []calsyncd.Settled
}

func (l *listener) Settled(s calsyncd.Settled) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, s)
}

func (l *listener) last(t *testing.T) calsyncd.Settled {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.got) == 0 {
		t.Fatal("the listener heard of no run")
	}
	return l.got[len(l.got)-1]
}

// Each run hands the listener what it settled on: the state it moved
// between, its held deletes and what it learnt of the account.
func TestSettleTellsTheListener(t *testing.T) {
	h := newHarness(t, "")
	l := &listener{}
	h.runner.Listener = l
	h.cfg.Sync.ErrorThreshold = 2
	full := weeklyFeed(30)
	h.setFeed(full)

	step := func(name string, opts subscription.Options, check func(s calsyncd.Settled) bool) {
		t.Helper()
		rep := h.syncWith(opts)
		s := l.last(t)
		if s.Run.ID != rep.Run.ID || s.Subscription != "team" || s.Account != "default" || s.Run.FinishedAt.IsZero() {
			t.Fatalf("%s: settled %+v does not match the run %+v", name, s, rep.Run)
		}
		if !check(s) {
			t.Fatalf("%s: settled %+v", name, s)
		}
	}
	step("first sync", subscription.Options{}, func(s calsyncd.Settled) bool {
		return s.To == calsyncd.StateActive && s.CredentialsRefused == calsyncd.Cleared && s.UsageLimited == calsyncd.Cleared && s.HeldDeletes == 0
	})
	h.setFeed([]byte("<html><body>Sign in</body></html>"))
	// Every pass asks Google whether it takes the account's credentials,
	// before the feed is read: a broken feed's pass learns they are good.
	step("a broken feed: the account's credentials checked all the same", subscription.Options{}, func(s calsyncd.Settled) bool {
		return s.To == calsyncd.StateActive && s.ConsecutiveErrors == 1 && s.CredentialsRefused == calsyncd.Cleared && s.UsageLimited == calsyncd.Unknown
	})
	step("the second failure: ERROR", subscription.Options{}, func(s calsyncd.Settled) bool {
		return s.From == calsyncd.StateActive && s.To == calsyncd.StateError
	})
	h.setFeed(weeklyFeed(3))
	step("back, but most events gone: deletes held", subscription.Options{}, func(s calsyncd.Settled) bool {
		return s.From == calsyncd.StateError && s.To == calsyncd.StateActive && s.HeldDeletes == 27 && s.Released == 0
	})
	step("released by the operator", subscription.Options{AllowDeletes: true}, func(s calsyncd.Settled) bool {
		return s.HeldDeletes == 0 && s.Released == 27 && s.ReleasedByOperator && s.CredentialsRefused == calsyncd.Cleared
	})

	h.fake.SetFaults(gcalfake.Faults{Unauthorized: true})
	h.setFeed(weeklyFeed(4))
	step("Google refuses the credentials", subscription.Options{}, func(s calsyncd.Settled) bool {
		return s.CredentialsRefused == calsyncd.Holds && s.Run.ErrorClass == calsyncd.ClassAuth
	})
	h.fake.SetFaults(gcalfake.Faults{})

	// A calendar the account may only read is the subscription's problem,
	// not a refusal of the account's credentials.
	h.fake.Share(testCalendar, gcalfake.RoleReader)
	step("a read-only calendar", subscription.Options{}, func(s calsyncd.Settled) bool {
		return s.Run.ErrorClass == calsyncd.ClassAuth && s.CredentialsRefused != calsyncd.Holds
	})
	h.fake.Share(testCalendar, gcalfake.RoleOwner)

	h.fake.SetUsageLimit(gcalfake.UsageLimit{Creates: 1, Window: time.Hour, Lockout: 3 * time.Hour})
	// Three new events (events deleted before would come back by update,
	// which the usage limit does not count).
	h.setFeed(withEvents(weeklyFeed(3), "new1", "new2", "new3"))
	step("a usage limit locks the account out", subscription.Options{}, func(s calsyncd.Settled) bool {
		return s.UsageLimited == calsyncd.Holds && s.UsageLimitedUntil.After(s.Run.FinishedAt) && s.Run.Outcome == calsyncd.OutcomeDeferred
	})
}

// withEvents adds all-day events with the given UIDs to an ICS feed.
func withEvents(feed []byte, uids ...string) []byte {
	const end = "END:VCALENDAR\r\n"
	out := string(feed[:len(feed)-len(end)])
	for i, uid := range uids {
		out += fmt.Sprintf("BEGIN:VEVENT\r\nUID:%s\r\nDTSTART;VALUE=DATE:202703%02d\r\nSUMMARY:%s\r\nEND:VEVENT\r\n", uid, i+1, uid)
	}
	return []byte(out + end)
}
