package alert_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/alert"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/store"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// hookInMemory receives the webhooks without a socket (virtual time).
type hookInMemory struct {
	mu     sync.Mutex
	events []string
	bodies []string
}

func (h *hookInMemory) RoundTrip(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	var m alert.Message
	if err := json.Unmarshal(b, &m); err == nil {
		h.mu.Lock()
		h.events = append(h.events, string(m.Event))
		h.bodies = append(h.bodies, string(b))
		h.mu.Unlock()
	}
	return &http.Response{StatusCode: http.StatusNoContent, Status: "204 No Content", Request: r, Header: http.Header{},
		Body: io.NopCloser(strings.NewReader(""))}, nil
}

// sameFeed answers every fetch with one body and no validators.
type sameFeed struct{}

func (sameFeed) Open(context.Context, fetch.Request) (*fetch.Response, error) {
	return &fetch.Response{Body: []byte(weeklyFeed(3)), BodyHash: "same"}, nil
}

// A token revoked while the feed never changes is announced (auth_failed,
// then error_entered on the third pass): the pass checks the account's
// credentials even when it has nothing to write.
func TestARevokedTokenOnAnUnchangedFeedIsAnnounced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := gcalfake.New(gcalfake.Options{Seed: 1})
		fake.AddCalendar(testCalendar, "UTC")
		cfg := config.Default()
		cfg.StateDir = t.TempDir()
		cfg.Sync.ReconcileInterval = 0
		cfg.Subscriptions = []config.Subscription{{ID: "team", URL: "https://example.com/team.ics", Calendar: testCalendar}}
		cfg.Alerts = []config.Alert{{URL: "https://hooks.example.com/calsyncd"}}
		st, err := store.Open(context.Background(), "sqlite", filepath.Join(cfg.StateDir, "calsyncd.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		svc, err := calendar.NewService(context.Background(), option.WithEndpoint(gcalfake.Endpoint), option.WithHTTPClient(fake.Client("tok")))
		if err != nil {
			t.Fatal(err)
		}
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		writer := gcalwriter.New(svc, gcalwriter.Options{Logger: log, Spacing: time.Millisecond})
		hook := &hookInMemory{}
		n := alert.New(alert.Options{Config: func() *config.Config { return cfg }, Memory: st, Logger: log,
			Client: &http.Client{Transport: hook}})
		r := &subscription.Runner{Config: cfg, Store: st, Log: log, Listener: n, Fetcher: sameFeed{},
			Writer: func(string) (subscription.Writer, error) { return writer, nil }}
		sync := func() subscription.Report {
			rep, err := r.Sync(context.Background(), cfg.Subscriptions[0], subscription.Options{})
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Hour)
			return rep
		}
		if rep := sync(); rep.Run.Outcome != calsyncd.OutcomeOK {
			t.Fatalf("first sync: %s (%v)", rep.Run.Outcome, rep.Err)
		}
		if rep := sync(); rep.Run.Outcome != calsyncd.OutcomeNotModified {
			t.Fatalf("second sync: %s (%v)", rep.Run.Outcome, rep.Err)
		}
		fake.Revoke("tok")
		for range 3 {
			sync()
		}
		if err := n.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		hook.mu.Lock()
		defer hook.mu.Unlock()
		if got := strings.Join(hook.events, ","); got != "auth_failed,error_entered" {
			t.Fatalf("alerts %q, want auth_failed,error_entered", got)
		}
		if !strings.Contains(hook.bodies[0], "auth login --account default") {
			t.Errorf("the auth alert does not say what to do: %s", hook.bodies[0])
		}
	})
}
