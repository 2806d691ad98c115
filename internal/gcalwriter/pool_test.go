package gcalwriter_test

import (
	"context"
	"errors"
	"testing"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

func TestPoolGivesOneWriterPerAccount(t *testing.T) {
	fake := gcalfake.New(gcalfake.Options{})
	opened := map[string]int{}
	broken := true
	pool := gcalwriter.NewPool(func(ctx context.Context, account string) (*calendar.Service, string, error) {
		opened[account]++
		if account == "bob" && broken {
			return nil, "", errors.New("bob's key is unreadable")
		}
		svc, err := calendar.NewService(ctx, option.WithEndpoint(gcalfake.Endpoint), option.WithHTTPClient(fake.Client(account)))
		return svc, account + "@example.com", err
	}, func(string) gcalwriter.Options { return gcalwriter.DefaultOptions() })

	ctx := context.Background()
	a1, err := pool.Writer(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := pool.Writer(ctx, "alice")
	if a1 != a2 || opened["alice"] != 1 {
		t.Errorf("alice got two writers (opened %d times): subscriptions of one account must share its pacer", opened["alice"])
	}
	if _, err := pool.Writer(ctx, "bob"); err == nil {
		t.Fatal("bob's broken account gave a writer")
	}
	broken = false
	b, err := pool.Writer(ctx, "bob")
	if err != nil || b == a1 || opened["bob"] != 2 {
		t.Errorf("a failed open is tried again, and another account gets its own writer: %v, opened %d", err, opened["bob"])
	}
	states := pool.States()
	if len(states) != 2 || states[0].Account != "alice" || states[1].Account != "bob" {
		t.Errorf("states: %+v", states)
	}
	pool.Retain(func(account string) bool { return account != "alice" })
	if a3, _ := pool.Writer(ctx, "alice"); a3 == a1 || opened["alice"] != 2 {
		t.Error("a dropped account's writer is made anew")
	}
	if b2, _ := pool.Writer(ctx, "bob"); b2 != b {
		t.Error("a retained account keeps its writer")
	}
}
