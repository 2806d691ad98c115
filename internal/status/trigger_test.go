package status_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// triggerSource is the state a trigger reads: each subscription's feed
// Retry-After and when its last run started.
type triggerSource struct {
	status.Source
	notBefore map[string]time.Time
	lastRun   map[string]time.Time
}

func (f *triggerSource) Subscriptions(context.Context) ([]calsyncd.SubscriptionState, error) {
	var out []calsyncd.SubscriptionState
	for _, id := range []string{"team", "holidays"} {
		out = append(out, calsyncd.SubscriptionState{ID: id, FetchNotBefore: f.notBefore[id]})
	}
	return out, nil
}

func (f *triggerSource) Runs(_ context.Context, id string, _ int) ([]calsyncd.Run, error) {
	if at, ok := f.lastRun[id]; ok {
		return []calsyncd.Run{{ID: 1, SubscriptionID: id, StartedAt: at, FinishedAt: at.Add(time.Minute)}}, nil
	}
	return nil, nil
}

// post is one POST /subscriptions/{sub}/sync, after waiting wait, and what
// it must get.
type post struct {
	wait       time.Duration
	sub, body  string
	code       int
	retryAfter string // the Retry-After header, when code is 429
	says       []string
}

// Without status.token any local user can reach the trigger (without the
// rule they released held deletes, and looped syncs past the feed's
// Retry-After). Without a token a POST starts only an ordinary sync, no
// sooner than 5 minutes after the subscription's last run and never before
// the feed's Retry-After; with the token, every option works as before and
// nothing is rate limited. Time is the bubble's.
func TestTriggerWithoutTokenIsAnOrdinarySyncAtTheFeedsPace(t *testing.T) {
	const needsToken = "needs status.token"
	tests := []struct {
		name      string
		token     string
		notBefore time.Duration // the feed's Retry-After for team, from now
		lastRun   time.Duration // team's last run started this long ago (0: never ran)
		daemonErr error
		posts     []post
		triggered []subscription.Options
	}{
		{name: "no token: allow_deletes is refused, every time, and takes no turn", posts: []post{
			{sub: "team", body: `{"allow_deletes":true}`, code: 403, says: []string{"allow_deletes", needsToken, "calsyncd sync --allow-deletes team"}},
			{sub: "team", body: `{"allow_deletes":true}`, code: 403},
			{sub: "team", body: `{"allow_deletes":true,"reconcile":true}`, code: 403, says: []string{"allow_deletes and reconcile", "--allow-deletes --reconcile"}},
			{sub: "team", code: 202},
		}, triggered: []subscription.Options{{}}},
		{name: "no token: reconcile is refused", posts: []post{
			{sub: "team", body: `{"reconcile":true}`, code: 403, says: []string{"reconcile", needsToken}},
		}},
		{name: "no token: options switched off are an ordinary sync", posts: []post{
			{sub: "team", body: `{"allow_deletes":false}`, code: 202},
		}, triggered: []subscription.Options{{}}},
		{name: "no token: repeated POSTs wait for the interval", posts: []post{
			{sub: "team", code: 202},
			{sub: "team", code: 429, retryAfter: "300", says: []string{"status.token", "try again in 300s"}},
			{wait: 4*time.Minute + 30*time.Second, sub: "team", code: 429, retryAfter: "30"},
			{wait: 30 * time.Second, sub: "team", code: 202},
			{sub: "team", code: 429, retryAfter: "300"},
		}, triggered: []subscription.Options{{}, {}}},
		{name: "no token: each subscription has its own pace", posts: []post{
			{sub: "team", code: 202},
			{sub: "holidays", code: 202},
			{sub: "team", code: 429, retryAfter: "300"},
		}, triggered: []subscription.Options{{}, {}}},
		{name: "no token: a recent run counts", lastRun: time.Minute, posts: []post{
			{sub: "team", code: 429, retryAfter: "240"},
			{wait: 4 * time.Minute, sub: "team", code: 202},
		}, triggered: []subscription.Options{{}}},
		{name: "no token: the feed's Retry-After is respected", notBefore: 20 * time.Minute, posts: []post{
			{sub: "team", code: 429, retryAfter: "1200"},
			{wait: 19 * time.Minute, sub: "team", code: 429, retryAfter: "60"},
			{wait: time.Minute, sub: "team", code: 202},
		}, triggered: []subscription.Options{{}}},
		{name: "no token: a trigger the daemon refused takes no turn", daemonErr: subscription.ErrBusy, posts: []post{
			{sub: "team", code: 409},
			{sub: "team", code: 409},
		}, triggered: []subscription.Options{{}, {}}},
		{name: "token: allow_deletes works, again and again", token: "tok", notBefore: time.Hour, lastRun: time.Minute, posts: []post{
			{sub: "team", body: `{"allow_deletes":true}`, code: 202},
			{sub: "team", body: `{"allow_deletes":true}`, code: 202},
			{sub: "team", body: `{"reconcile":true}`, code: 202},
		}, triggered: []subscription.Options{{AllowDeletes: true}, {AllowDeletes: true}, {Reconcile: true}}},
		{name: "token: plain syncs are not rate limited", token: "tok", notBefore: time.Hour, posts: []post{
			{sub: "team", code: 202}, {sub: "team", code: 202}, {sub: "team", code: 202},
		}, triggered: []subscription.Options{{}, {}, {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				now := time.Now()
				src := &triggerSource{notBefore: map[string]time.Time{}, lastRun: map[string]time.Time{}}
				if tt.notBefore > 0 {
					src.notBefore["team"] = now.Add(tt.notBefore)
				}
				if tt.lastRun > 0 {
					src.lastRun["team"] = now.Add(-tt.lastRun)
				}
				d := &fakeDaemon{running: true, runID: 9, err: tt.daemonErr}
				cfg := config.Default()
				cfg.Status.Token = tt.token
				h := status.NewServer(status.ServerOptions{Source: src, Config: func() *config.Config { return cfg }, Daemon: d,
					Metrics: status.NewMetrics(), Token: tt.token, Log: slog.New(slog.DiscardHandler)}).Handler()
				for i, p := range tt.posts {
					time.Sleep(p.wait)
					req := httptest.NewRequest("POST", "http://127.0.0.1:8765/subscriptions/"+p.sub+"/sync", strings.NewReader(p.body))
					if tt.token != "" {
						req.Header.Set("Authorization", "Bearer "+tt.token)
					}
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if rec.Code != p.code {
						t.Fatalf("POST %d (%s %s, at +%s): %d %s, want %d", i+1, p.sub, p.body, time.Since(now), rec.Code, rec.Body, p.code)
					}
					if got := rec.Header().Get("Retry-After"); got != p.retryAfter {
						t.Errorf("POST %d: Retry-After %q, want %q", i+1, got, p.retryAfter)
					}
					for _, w := range p.says {
						if !strings.Contains(rec.Body.String(), w) {
							t.Errorf("POST %d: the answer does not say %q: %s", i+1, w, rec.Body)
						}
					}
				}
				if !reflect.DeepEqual(d.opts, tt.triggered) {
					t.Errorf("the daemon ran %+v, want %+v", d.opts, tt.triggered)
				}
			})
		})
	}
}

// calsyncd sync --allow-deletes, handed to a daemon without status.token,
// is refused with the reason, and the daemon runs nothing.
func TestHandOffOfAllowDeletesNeedsTheToken(t *testing.T) {
	d := &fakeDaemon{running: true, runID: 7}
	ts, _ := server(t, d, "")
	_, err := status.HandOff(context.Background(), handOffConfig(ts, ""), "team", subscription.Options{AllowDeletes: true})
	var ho *status.HandOffError
	if !errors.As(err, &ho) || ho.Code != http.StatusForbidden || !strings.Contains(ho.Message, "needs status.token") {
		t.Fatalf("HandOff = %v, want 403 saying it needs status.token", err)
	}
	if len(d.got) != 0 {
		t.Errorf("the daemon ran %v", d.got)
	}
}

// Without status.token, the command line is the operator: a daemon's Serve
// keeps a key in the state directory (readable by its user only), and
// calsyncd sync hands a sync over with it, options and all, unpaced. A
// process that cannot read the key gets an ordinary sync at most.
func TestHandOffWithTheStateDirectorysKey(t *testing.T) {
	st, cfg := fixture(t)
	cfg.StateDir = t.TempDir()
	d := &fakeDaemon{running: true, runID: 7}
	srv := status.NewServer(status.ServerOptions{Source: st, Config: func() *config.Config { return cfg }, Daemon: d,
		Metrics: status.NewMetrics(), Log: slog.New(slog.DiscardHandler), Now: func() time.Time { return t0 }})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	cfg.Listen = ln.Addr().String()
	// Serve writes the key before it accepts: once it answers (the
	// listener queues the request until then), the key is there.
	resp, err := http.Get("http://" + cfg.Listen + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	fi, err := os.Stat(filepath.Join(cfg.StateDir, "status.key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v, %v; want mode 0600", fi, err)
	}
	stranger := *cfg
	stranger.StateDir = t.TempDir() // cannot read the daemon's
	tests := []struct {
		name string
		cfg  *config.Config
		opts subscription.Options
		code int
	}{
		{"the command line: allow_deletes", cfg, subscription.Options{AllowDeletes: true}, http.StatusAccepted},
		{"the command line again, at once", cfg, subscription.Options{AllowDeletes: true, Reconcile: true}, http.StatusAccepted},
		{"the command line: a plain sync, at once", cfg, subscription.Options{}, http.StatusAccepted},
		{"without the key: allow_deletes", &stranger, subscription.Options{AllowDeletes: true}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(d.opts)
			_, err := status.HandOff(context.Background(), tt.cfg, "team", tt.opts)
			var ho *status.HandOffError
			switch {
			case tt.code == http.StatusAccepted && err != nil:
				t.Fatalf("HandOff = %v", err)
			case tt.code != http.StatusAccepted && (!errors.As(err, &ho) || ho.Code != tt.code):
				t.Fatalf("HandOff = %v, want %d", err, tt.code)
			}
			ran := len(d.opts) > before
			if ran != (tt.code == http.StatusAccepted) || ran && !reflect.DeepEqual(d.opts[len(d.opts)-1], tt.opts) {
				t.Errorf("the daemon ran %+v", d.opts[before:])
			}
		})
	}
	req, _ := http.NewRequest("POST", "http://"+cfg.Listen+"/subscriptions/team/sync", strings.NewReader(`{"allow_deletes":true}`))
	req.Header.Set("Authorization", "Bearer not-the-key")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a wrong key: %d, want 403", resp.StatusCode)
	}
}
