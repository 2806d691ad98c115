package alert_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/alert"
	"github.com/calsyncd/calsyncd/internal/config"
)

// A run turned its subscription ERROR: the Slack webhook hears of it once.
func ExampleNotifier() {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Println(string(b))
	}))
	defer hook.Close()
	cfg := config.Default()
	cfg.Alerts = []config.Alert{{URL: hook.URL + "/services/T0/B0/secret", Format: config.AlertSlack}}
	n := alert.New(alert.Options{Config: func() *config.Config { return cfg }, Memory: newMemory(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})

	run := calsyncd.Settled{Subscription: "team", Account: "default", From: calsyncd.StateActive, To: calsyncd.StateError,
		ConsecutiveErrors: 3, Run: calsyncd.Run{Outcome: calsyncd.OutcomeFailed, FinishedAt: time.Now(),
			ErrorClass: calsyncd.ClassFeedRejected, Error: "feed: the feed is not there (404 Not Found) — check the URL"}}
	n.Settled(run)
	n.Settled(run) // the same condition: no second message
	n.Close(context.Background())
	// Output:
	// {"text":"calsyncd: team is in ERROR\nSubscription team is in ERROR after 3 failed runs in a row; its calendar is not being updated. Last error (feed_rejected): feed: the feed is not there (404 Not Found) — check the URL. calsyncd keeps retrying, less often (at most every sync.error_max_interval); `calsyncd status` explains the error. Fix it, then `calsyncd sync team` runs it at once."}
}
