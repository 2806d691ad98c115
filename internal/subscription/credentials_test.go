package subscription_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/store"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// rateLimitedReads answers calendars.get 429 while on is set, in Google's
// shape; everything else goes to the emulator.
type rateLimitedReads struct {
	next http.RoundTripper
	on   atomic.Bool
	hits atomic.Int32
}

func (t *rateLimitedReads) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.on.Load() && r.Method == http.MethodGet && !strings.Contains(r.URL.Path, "/events") {
		t.hits.Add(1)
		body := `{"error":{"code":429,"message":"Rate Limit Exceeded","status":"RESOURCE_EXHAUSTED",` +
			`"errors":[{"domain":"usageLimits","reason":"rateLimitExceeded","message":"Rate Limit Exceeded"}]}}`
		return &http.Response{StatusCode: http.StatusTooManyRequests, Status: "429 Too Many Requests", Request: r,
			Header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}}, Body: io.NopCloser(strings.NewReader(body))}, nil
	}
	return t.next.RoundTrip(r)
}

// credentialWorld is a runner on the emulator (in memory, no sockets: it
// runs in virtual time) with subscriptions of one account, whose feeds
// answer as the test says.
type credentialWorld struct {
	fake   *gcalfake.Server
	limit  *rateLimitedReads
	store  *store.Store
	runner *subscription.Runner
	subs   []config.Subscription

	mu       sync.Mutex
	feedMode string // "body", "304" or "same body"
}

const credentialFeed = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\nBEGIN:VEVENT\r\nUID:a@example.com\r\n" +
	"DTSTART:20270111T090000Z\r\nDTEND:20270111T100000Z\r\nSUMMARY:A\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

func (w *credentialWorld) Open(_ context.Context, req fetch.Request) (*fetch.Response, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.feedMode == "304" && req.ETag == `"v1"` {
		return &fetch.Response{NotModified: true, ETag: `"v1"`}, nil
	}
	etag := `"v1"`
	if w.feedMode == "same body" {
		etag = "" // a server that sends no validators
	}
	return &fetch.Response{Body: []byte(credentialFeed), BodyHash: "h1", ETag: etag}, nil
}

func (w *credentialWorld) setFeed(mode string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.feedMode = mode
}

func newCredentialWorld(t *testing.T, ids ...string) *credentialWorld {
	t.Helper()
	w := &credentialWorld{fake: gcalfake.New(gcalfake.Options{Seed: 1}), feedMode: "body"}
	cfg := config.Default()
	cfg.StateDir = t.TempDir()
	cfg.Sync.ReconcileInterval = 0
	for _, id := range ids {
		cal := id + "@group.calendar.google.com"
		w.fake.AddCalendar(cal, "Europe/Berlin")
		w.subs = append(w.subs, config.Subscription{ID: id, URL: "https://example.com/" + id + ".ics", Calendar: cal})
	}
	cfg.Subscriptions = w.subs
	st, err := store.Open(context.Background(), "sqlite", filepath.Join(cfg.StateDir, "calsyncd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w.store = st
	w.limit = &rateLimitedReads{next: w.fake.Transport("token-of-default")}
	svc, err := calendar.NewService(context.Background(), option.WithEndpoint(gcalfake.Endpoint),
		option.WithHTTPClient(&http.Client{Transport: w.limit}))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	writer := gcalwriter.New(svc, gcalwriter.Options{Logger: log, Spacing: time.Millisecond})
	w.runner = &subscription.Runner{Config: cfg, Store: st, Fetcher: w, Log: log,
		Writer: func(string) (subscription.Writer, error) { return writer, nil }}
	return w
}

func (w *credentialWorld) sync(t *testing.T, sub config.Subscription) subscription.Report {
	t.Helper()
	rep, err := w.runner.Sync(context.Background(), sub, subscription.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// calendarReads is how many calendars.get requests the emulator served.
func (w *credentialWorld) calendarReads() int { return w.fake.Stats().ByOp["calendars.get"] }

// A feed that has not changed (304, or the same body from a server without
// validators) writes nothing to Google, yet a revoked token is noticed:
// each pass asks Google once whether it takes the account's credentials,
// so three passes turn the subscription ERROR with a message that says
// what to do (not ACTIVE, exit 0, for ever).
func TestARevokedTokenIsNoticedOnAnUnchangedFeed(t *testing.T) {
	for _, mode := range []string{"304", "same body"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newCredentialWorld(t, "team")
				sub := w.subs[0]
				if rep := w.sync(t, sub); rep.Run.Outcome != calsyncd.OutcomeOK || rep.Run.Created != 1 {
					t.Fatalf("first sync: %s %+v (%v)", rep.Run.Outcome, rep.Run, rep.Err)
				}
				w.setFeed(mode)
				time.Sleep(time.Hour)
				before := w.calendarReads()
				if rep := w.sync(t, sub); rep.Run.Outcome != calsyncd.OutcomeNotModified {
					t.Fatalf("unchanged feed: %s (%v)", rep.Run.Outcome, rep.Err)
				}
				if n := w.calendarReads() - before; n != 1 {
					t.Errorf("an unchanged feed's pass asked Google %d times, want once", n)
				}

				w.fake.Revoke("token-of-default")
				var rep subscription.Report
				for i := 1; i <= 3; i++ {
					time.Sleep(time.Hour)
					before := w.fake.Stats().Requests
					rep = w.sync(t, sub)
					if rep.Run.Outcome != calsyncd.OutcomeFailed || rep.Run.ErrorClass != calsyncd.ClassAuth {
						t.Fatalf("pass %d against a revoked token: %s/%s (%v)", i, rep.Run.Outcome, rep.Run.ErrorClass, rep.Err)
					}
					// One request, and the designed second try after a
					// 401 (the token source may have a fresh token).
					if n := w.fake.Stats().Requests - before; n > 2 {
						t.Errorf("pass %d made %d requests to Google, want at most 2", i, n)
					}
				}
				if rep.State != calsyncd.StateError {
					t.Fatalf("after three passes against a revoked token: %s, want ERROR", rep.State)
				}
				st, err := w.store.Subscription(context.Background(), "team")
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(st.LastError, "calsyncd auth login --account default") || st.LastErrorClass != calsyncd.ClassAuth {
					t.Errorf("the status does not say what to do: %s: %q", st.LastErrorClass, st.LastError)
				}

				// Logged in again: the next pass is clean.
				w.fake.Reinstate("token-of-default")
				time.Sleep(time.Hour)
				if rep := w.sync(t, sub); rep.State != calsyncd.StateActive {
					t.Fatalf("after the token is good again: %s (%v)", rep.State, rep.Err)
				}
			})
		})
	}
}

// A rate limit on the credential check is no verdict: however many passes
// meet it, the subscription stays ACTIVE with no error counted.
func TestARateLimitedCredentialCheckNeverCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newCredentialWorld(t, "team")
		sub := w.subs[0]
		w.sync(t, sub)
		w.setFeed("304")
		w.limit.on.Store(true)
		for i := 1; i <= 5; i++ {
			time.Sleep(time.Hour)
			rep := w.sync(t, sub)
			if rep.Run.Outcome == calsyncd.OutcomeFailed || rep.State != calsyncd.StateActive || rep.Transition.ConsecutiveErrors != 0 {
				t.Fatalf("pass %d with the check rate-limited: %s, %s, %d errors (%v)", i, rep.Run.Outcome, rep.State,
					rep.Transition.ConsecutiveErrors, rep.Err)
			}
		}
		if w.limit.hits.Load() == 0 {
			t.Fatal("the check was never rate-limited: the test proves nothing")
		}
	})
}

// The passes of several subscriptions of one account that begin together
// (one `calsyncd sync` over all of them, or one daemon tick) share one
// check: one request for the account, not one per subscription.
func TestTheCredentialCheckIsSharedByTheAccountsPasses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newCredentialWorld(t, "a", "b", "c", "d", "e")
		var wg sync.WaitGroup
		for _, sub := range w.subs {
			wg.Go(func() { w.sync(t, sub) })
		}
		wg.Wait()
		w.setFeed("304")
		for round := range 2 {
			time.Sleep(time.Hour)
			before := w.calendarReads()
			for _, sub := range w.subs {
				if rep := w.sync(t, sub); rep.Run.Outcome != calsyncd.OutcomeNotModified {
					t.Fatalf("%s: %s (%v)", sub.ID, rep.Run.Outcome, rep.Err)
				}
			}
			if n := w.calendarReads() - before; n != 1 {
				t.Errorf("round %d: five unchanged subscriptions of one account asked Google %d times, want once", round, n)
			}
		}
		// Revoked: every subscription of the account fails, still on one
		// check.
		w.fake.Revoke("token-of-default")
		time.Sleep(time.Hour)
		before := w.fake.Stats().Requests
		for _, sub := range w.subs {
			if rep := w.sync(t, sub); rep.Run.ErrorClass != calsyncd.ClassAuth {
				t.Errorf("%s: %s/%s, want an auth failure", sub.ID, rep.Run.Outcome, rep.Run.ErrorClass)
			}
		}
		if n := w.fake.Stats().Requests - before; n > 2 {
			t.Errorf("five subscriptions against a revoked token made %d requests, want at most 2", n)
		}
	})
}
