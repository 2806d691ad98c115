package alert_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/alert"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/store"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// Secrets the end-to-end test hides everywhere but where they belong.
const (
	secretFeedPath      = "private-s3cretpath"
	secretFeedQuery     = "s3cretquery"
	secretFeedHeader    = "Bearer s3cretheader"
	secretFeedPassword  = "s3cretpassword"
	secretHookPath      = "s3cretwebhookpath"
	secretHookQuery     = "s3cretwebhookkey"
	secretHookHeader    = "s3cretwebhookheader"
	testCalendar        = "team@group.calendar.google.com"
	feedEventsFormatted = "BEGIN:VEVENT\r\nUID:w%02d@example.com\r\nDTSTART;VALUE=DATE:2027%02d%02d\r\nSUMMARY:Week %d\r\nEND:VEVENT\r\n"
)

func weeklyFeed(n int) []byte {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//alert test//EN\r\n")
	for i := range n {
		fmt.Fprintf(&b, feedEventsFormatted, i, 1+i/28, 1+i%28, i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	return []byte(b.String())
}

// world is the daemon's pieces on a real store, the emulator and a feed
// server, with a notifier posting to a local receiver.
type world struct {
	t      *testing.T
	fake   *gcalfake.Server
	cfg    *config.Config
	dbPath string
	clock  *clock
	logs   *syncBuffer
	rcv    *receiver
	svc    *calendar.Service

	mu         sync.Mutex
	feedStatus int
	feedBody   []byte

	store    *store.Store
	runner   *subscription.Runner
	notifier *alert.Notifier
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, fake: gcalfake.New(gcalfake.Options{Seed: 1}), clock: &clock{t: time.Now().UTC()},
		logs: &syncBuffer{}, rcv: &receiver{}, feedBody: weeklyFeed(30)}
	w.fake.AddCalendar(testCalendar, "Europe/Berlin")
	api := httptest.NewServer(w.fake)
	t.Cleanup(api.Close)
	feeds := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.feedStatus != 0 {
			rw.WriteHeader(w.feedStatus)
			return
		}
		rw.Write(w.feedBody)
	}))
	t.Cleanup(feeds.Close)
	hooks := httptest.NewServer(w.rcv)
	t.Cleanup(hooks.Close)

	w.cfg = config.Default()
	w.cfg.StateDir = t.TempDir()
	w.cfg.Google.Endpoint = api.URL + gcalfake.BasePath
	w.cfg.Sync.ReconcileInterval = 0
	w.cfg.Subscriptions = []config.Subscription{{ID: "team", Calendar: testCalendar,
		URL:       feeds.URL + "/" + secretFeedPath + "/basic.ics?token=" + secretFeedQuery,
		Headers:   map[string]string{"Authorization": secretFeedHeader},
		BasicAuth: &config.BasicAuth{Username: "me", Password: secretFeedPassword}}}
	w.cfg.Alerts = []config.Alert{{URL: hooks.URL + "/" + secretHookPath + "?key=" + secretHookQuery,
		Headers: map[string]string{"X-Token": secretHookHeader}}}
	w.dbPath = filepath.Join(w.cfg.StateDir, "calsyncd.db")
	var err error
	w.svc, err = calendar.NewService(context.Background(), option.WithEndpoint(w.cfg.Google.Endpoint), option.WithHTTPClient(api.Client()))
	if err != nil {
		t.Fatal(err)
	}
	w.start()
	t.Cleanup(w.stop)
	return w
}

// start opens the store and wires the runner and the notifier, as the
// daemon does at start-up.
func (w *world) start() {
	st, err := store.Open(context.Background(), "sqlite", w.dbPath)
	if err != nil {
		w.t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	writer := gcalwriter.New(w.svc, gcalwriter.Options{Logger: log, Spacing: time.Millisecond})
	w.store = st
	w.notifier = alert.New(alert.Options{Config: func() *config.Config { return w.cfg }, Memory: st, Logger: log, Now: w.clock.Now})
	w.runner = &subscription.Runner{Config: w.cfg, Store: st, Log: log, Now: w.clock.Now, Listener: w.notifier,
		Fetcher: fetch.NewFetcher(0, 0, 20<<20, feed.CheckBody),
		Writer:  func(string) (subscription.Writer, error) { return writer, nil }}
}

// stop shuts down as the daemon does: the alerts are flushed, the store
// closed.
func (w *world) stop() {
	if w.notifier == nil {
		return
	}
	if err := w.notifier.Close(context.Background()); err != nil {
		w.t.Error(err)
	}
	w.store.Close()
	w.notifier = nil
}

func (w *world) restart() {
	w.stop()
	w.start()
}

func (w *world) setFeed(status int, body []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.feedStatus, w.feedBody = status, body
}

func (w *world) sync(opts subscription.Options) subscription.Report {
	w.t.Helper()
	rep, err := w.runner.Sync(context.Background(), w.cfg.Subscriptions[0], opts)
	if err != nil {
		w.t.Fatal(err)
	}
	w.clock.Advance(time.Hour)
	return rep
}

// alerts flushes the notifier (by a restart) and returns what the
// receiver got, as "event" or "event (reminder)".
func (w *world) alerts() []string {
	w.restart()
	var out []string
	for _, r := range w.rcv.requests() {
		var m alert.Message
		if err := json.Unmarshal(r.body, &m); err != nil {
			w.t.Fatalf("alert body %q: %v", r.body, err)
		}
		e := string(m.Event)
		if m.Reminder {
			e += " (reminder)"
		}
		out = append(out, e)
	}
	return out
}

// The daemon's runs, end to end: each transition is announced once, a
// restart announces nothing again, a lasting ERROR is reminded of daily,
// and no secret appears in any alert or log line.
func TestAlertsEndToEnd(t *testing.T) {
	w := newWorld(t)
	want := []string{}
	expect := func(step string, events ...string) {
		t.Helper()
		want = append(want, events...)
		if got := w.alerts(); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s: alerts %v, want %v", step, got, want)
		}
	}

	if rep := w.sync(subscription.Options{}); rep.Run.Created != 30 {
		t.Fatalf("first sync: %+v", rep.Run)
	}
	expect("a healthy first sync")

	w.setFeed(http.StatusNotFound, nil)
	for range 5 {
		w.sync(subscription.Options{})
	}
	expect("five failed runs, the last three in ERROR", "error_entered")

	// ERROR came with the third failure, an hour apart each: the clock is
	// 3 h past it; every sync moves it an hour on.
	w.sync(subscription.Options{}) // after the restart alerts() did
	w.clock.Advance(19 * time.Hour)
	w.sync(subscription.Options{}) // 23 h after the announcement
	expect("within a day")
	w.sync(subscription.Options{}) // 24 h after
	expect("a day on", "error_entered (reminder)")

	w.setFeed(0, weeklyFeed(30))
	if rep := w.sync(subscription.Options{}); rep.State != calsyncd.StateActive {
		t.Fatalf("the feed is back but the subscription is %s", rep.State)
	}
	expect("the feed is back", "error_cleared")

	w.setFeed(0, weeklyFeed(4))
	w.sync(subscription.Options{})
	w.sync(subscription.Options{})
	expect("most events gone: held", "deletes_held")
	// The message says why they are held and what releases them.
	said := 0
	for _, r := range w.rcv.requests() {
		var m alert.Message
		if json.Unmarshal(r.body, &m) == nil && m.Event == "deletes_held" {
			said++
		}
		if json.Unmarshal(r.body, &m) == nil && m.Event == "deletes_held" &&
			!(strings.Contains(m.Message, "broken feed rather than a change") && strings.Contains(m.Message, "--allow-deletes team") &&
				strings.Contains(m.Message, "3 runs in a row ask for the same deletes")) {
			t.Errorf("deletes_held says: %s", m.Message)
		}
	}
	if said != 1 {
		t.Errorf("%d deletes_held messages, want 1", said)
	}
	w.sync(subscription.Options{AllowDeletes: true})
	expect("allowed", "deletes_released")

	w.fake.SetFaults(gcalfake.Faults{Unauthorized: true})
	w.setFeed(0, weeklyFeed(6))
	w.sync(subscription.Options{})
	w.sync(subscription.Options{})
	expect("Google refuses the account", "auth_failed")
	w.fake.SetFaults(gcalfake.Faults{})

	// Where the secrets may and may not go.
	logs := w.logs.String()
	for _, secret := range []string{secretFeedPath, secretFeedQuery, "s3cretheader", secretFeedPassword, secretHookPath, secretHookQuery, secretHookHeader} {
		if strings.Contains(logs, secret) {
			t.Errorf("the logs hold the secret %q", secret)
		}
		for _, r := range w.rcv.requests() {
			if strings.Contains(string(r.body), secret) || strings.Contains(r.header.Get("Title"), secret) {
				t.Errorf("an alert holds the secret %q: %s", secret, r.body)
			}
		}
	}
	for _, r := range w.rcv.requests() {
		if r.header.Get("X-Token") != secretHookHeader || r.path != "/"+secretHookPath || r.query != "key="+secretHookQuery {
			t.Errorf("the webhook was not called as configured: %s?%s %v", r.path, r.query, r.header)
		}
	}
	if !strings.Contains(logs, "alert sent") || !strings.Contains(logs, "webhook=http://127.0.0.1:") {
		t.Errorf("no alert sent line naming the webhook by scheme and host:\n%s", logs)
	}
}

// A receiver that never answers holds up no sync: the runs go on, their
// alerts wait in the queue.
func TestAStuckReceiverDoesNotDelayTheSync(t *testing.T) {
	w := newWorld(t)
	stuck := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-stuck }))
	defer hang.Close()
	defer close(stuck)
	w.cfg.Alerts = []config.Alert{{URL: hang.URL}}
	w.setFeed(http.StatusNotFound, nil)
	for range 4 {
		// Were a run to wait for the receiver, this would never return.
		w.sync(subscription.Options{})
	}
	st, err := w.store.Subscription(context.Background(), "team")
	if err != nil || st.State != calsyncd.StateError {
		t.Fatalf("state %+v, %v", st, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // shut down at once: the alert is dropped, with a log line
	if err := w.notifier.Close(ctx); err == nil {
		t.Error("Close with a stuck receiver and no time left reported nothing")
	}
	if !strings.Contains(w.logs.String(), "alert not delivered") {
		t.Errorf("the alert lost at shutdown is not logged:\n%s", w.logs)
	}
}
