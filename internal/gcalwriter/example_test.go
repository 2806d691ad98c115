package gcalwriter_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

func ExampleWriter_Apply() {
	// Google, in memory, refusing all but the first write for a while.
	fake := gcalfake.New(gcalfake.Options{Quota: gcalfake.Quota{Rate: 0.001, Burst: 1}})
	fake.AddCalendar("team@example.com", "UTC")
	svc, _ := calendar.NewService(context.Background(), option.WithEndpoint(gcalfake.Endpoint), option.WithHTTPClient(fake.Client("alice")))

	// One writer per Google account, shared by its subscriptions.
	w := gcalwriter.New(svc, gcalwriter.Options{Account: "alice", Spacing: time.Millisecond,
		MaxAttempts: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var ops []diff.Op
	for _, ev := range events(3) {
		ops = append(ops, diff.Op{Kind: diff.Create, Key: ev.Key(), Event: &ev})
	}
	res := w.Apply(context.Background(), diff.Batch{SubscriptionID: "team", CalendarID: "team@example.com", Ops: ops}, newMem())
	fmt.Printf("created %d, deferred %d, error %v\n", res.Created, res.Deferred, res.Err)
	st := w.State()
	// The account's writes are deferred, without asking Google, for 15-30 s.
	fmt.Println("throttled:", st.ThrottleClass, time.Until(st.ThrottleUntil) <= 30*time.Second)
	// Output:
	// created 1, deferred 2, error <nil>
	// throttled: rate_limited true
}
