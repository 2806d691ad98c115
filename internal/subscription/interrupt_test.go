package subscription_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// TestShutdownDuringTheFeedDownloadIsDeferred: a run cut short by shutdown
// while the feed's body is arriving is deferred: it neither counts toward
// ERROR nor resets the count, and three such stops in a row leave a
// healthy subscription ACTIVE. A download the feed server
// breaks off is still a failure.
func TestShutdownDuringTheFeedDownloadIsDeferred(t *testing.T) {
	body, err := os.ReadFile("../../testdata/feeds/team.ics")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		// stop ends the download half-way: the daemon's shutdown cancels
		// the run's context, or the feed server drops the connection.
		shutdown bool
		// opened: the cut comes once the fetch returned the streaming
		// body (the parser is reading it), not while it waits for it.
		opened      bool
		wantOutcome calsyncd.Outcome
		wantErrors  int // ConsecutiveErrors after three such runs
		wantState   calsyncd.State
	}{
		"shutdown mid-body":                    {shutdown: true, wantOutcome: calsyncd.OutcomeDeferred, wantState: calsyncd.StateActive},
		"shutdown while the body is parsed":    {shutdown: true, opened: true, wantOutcome: calsyncd.OutcomeDeferred, wantState: calsyncd.StateActive},
		"feed server breaks off":               {wantOutcome: calsyncd.OutcomeFailed, wantErrors: 3, wantState: calsyncd.StateError},
		"feed server breaks off while parsing": {opened: true, wantOutcome: calsyncd.OutcomeFailed, wantErrors: 3, wantState: calsyncd.StateError},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, "../../testdata/feeds/team.ics")
			if rep := h.sync(); rep.Run.Outcome != calsyncd.OutcomeOK {
				t.Fatalf("first sync: %s %s", rep.Run.Outcome, rep.Run.Error)
			}

			// From now on the feed server sends half the body, then waits
			// for the test to say how the download ends.
			sent := make(chan struct{})
			hangUp := make(chan struct{})
			feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/calendar")
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				w.Write(body[:len(body)/2])
				w.(http.Flusher).Flush()
				sent <- struct{}{}
				select {
				case <-r.Context().Done():
				case <-hangUp:
					// Drop the connection without the rest of the body.
					conn, _, err := w.(http.Hijacker).Hijack()
					if err == nil {
						conn.Close()
					}
				}
			}))
			t.Cleanup(feeds.Close)
			opened := make(chan struct{}, 1)
			h.runner.Fetcher = openedFetcher{Fetcher: h.runner.Fetcher, opened: opened}
			s := h.cfg.Subscriptions[0]
			s.URL = feeds.URL + "/team.ics"
			h.cfg.Subscriptions[0] = s

			for i := range 3 {
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan subscription.Report, 1)
				go func() {
					rep, err := h.runner.Sync(ctx, s, subscription.Options{})
					if err != nil {
						t.Errorf("sync: %v", err)
					}
					done <- rep
				}()
				<-sent
				if tt.opened {
					<-opened
				}
				if tt.shutdown {
					cancel()
				} else {
					hangUp <- struct{}{}
				}
				rep := <-done
				cancel()
				if rep.Run.Outcome != tt.wantOutcome {
					t.Errorf("run %d: outcome %s (class %s: %s), want %s", i+1, rep.Run.Outcome, rep.Run.ErrorClass, rep.Run.Error, tt.wantOutcome)
				}
				stored, err := h.store.Runs(context.Background(), s.ID, 1)
				if err != nil || len(stored) != 1 || stored[0].Outcome != tt.wantOutcome {
					t.Errorf("run %d: stored %+v, %v; want outcome %s", i+1, stored, err, tt.wantOutcome)
				}
			}
			st, err := h.store.Subscription(context.Background(), s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if st.ConsecutiveErrors != tt.wantErrors || st.State != tt.wantState {
				t.Errorf("after three runs: %s with %d consecutive errors (last error %q), want %s with %d",
					st.State, st.ConsecutiveErrors, st.LastError, tt.wantState, tt.wantErrors)
			}
			if tt.shutdown && st.LastError != "" {
				t.Errorf("a shutdown left the error %q on the subscription", st.LastError)
			}
		})
	}
}

// openedFetcher tells when Open returned: the body is the parser's to read.
type openedFetcher struct {
	subscription.Fetcher
	opened chan struct{}
}

func (f openedFetcher) Open(ctx context.Context, req fetch.Request) (*fetch.Response, error) {
	resp, err := f.Fetcher.Open(ctx, req)
	select {
	case f.opened <- struct{}{}:
	default:
	}
	return resp, err
}

// TestShutdownDuringGoogleRequestsIsDeferred: a shutdown that cancels the
// account check or the writes is no failure of the account or of Google:
// the run is deferred and the subscription's count is untouched.
func TestShutdownDuringGoogleRequestsIsDeferred(t *testing.T) {
	for _, stage := range []string{"account", "apply"} {
		t.Run(stage, func(t *testing.T) {
			h := newHarness(t, "../../testdata/feeds/team.ics")
			real, err := h.runner.Writer("default")
			if err != nil {
				t.Fatal(err)
			}
			s := h.cfg.Subscriptions[0]
			for i := range 3 {
				ctx, cancel := context.WithCancel(context.Background())
				h.runner.Writer = func(string) (subscription.Writer, error) {
					return cancellingWriter{Writer: real, stage: stage, cancel: cancel}, nil
				}
				rep, err := h.runner.Sync(ctx, s, subscription.Options{})
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if rep.Run.Outcome != calsyncd.OutcomeDeferred || rep.Run.ErrorClass != "" {
					t.Errorf("run %d: outcome %s (class %q: %s), want deferred", i+1, rep.Run.Outcome, rep.Run.ErrorClass, rep.Run.Error)
				}
			}
			st, err := h.store.Subscription(context.Background(), s.ID)
			if err != nil || st.State != calsyncd.StateActive || st.ConsecutiveErrors != 0 || st.LastError != "" {
				t.Errorf("after three interrupted runs: %+v, %v; want ACTIVE, no errors", st, err)
			}
		})
	}
}

// cancellingWriter is shut down in the middle of a stage: it cancels the
// run's context and answers as a request cut short does.
type cancellingWriter struct {
	subscription.Writer
	stage  string
	cancel context.CancelFunc
}

func (w cancellingWriter) CheckAccount(ctx context.Context, sub, cal string) (bool, error) {
	if w.stage != "account" {
		return w.Writer.CheckAccount(ctx, sub, cal)
	}
	w.cancel()
	return false, fmt.Errorf("gcalwriter: check the calendar: %w", ctx.Err())
}

func (w cancellingWriter) Apply(ctx context.Context, b diff.Batch, p calsyncd.Persister) calsyncd.WriteResult {
	if w.stage != "apply" {
		return w.Writer.Apply(ctx, b, p)
	}
	w.cancel()
	return calsyncd.WriteResult{Failed: len(b.Ops), Err: fmt.Errorf("gcalwriter: write: %w", ctx.Err())}
}
