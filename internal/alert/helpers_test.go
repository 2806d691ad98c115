package alert_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/alert"
	"github.com/calsyncd/calsyncd/internal/config"
)

// received is one request a receiver got.
type received struct {
	at     time.Time
	path   string
	query  string
	header http.Header
	body   []byte
}

// receiver is a webhook: it records what it is sent and answers with
// status (200 unless set), or 503 to the first failFirst requests.
type receiver struct {
	mu        sync.Mutex
	got       []received
	status    int
	failFirst int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.got = append(r.got, received{at: time.Now(), path: req.URL.Path, query: req.URL.RawQuery, header: req.Header.Clone(), body: body})
	status := r.status
	if len(r.got) <= r.failFirst {
		status = http.StatusServiceUnavailable
	}
	r.mu.Unlock()
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// handlerClient serves every request in memory with h, so that a
// testing/synctest bubble sees each wait of the sender.
func handlerClient(h http.Handler) *http.Client {
	return &http.Client{Transport: roundTripper(func(req *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Result(), nil
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// memory is an in-memory alert.Memory.
type memory struct {
	mu sync.Mutex
	m  map[[2]string]calsyncd.AlertState
}

func newMemory() *memory { return &memory{m: map[[2]string]calsyncd.AlertState{}} }

func (m *memory) AlertState(_ context.Context, condition, subject string) (calsyncd.AlertState, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.m[[2]string{condition, subject}]
	return st, ok, nil
}

func (m *memory) SaveAlertState(_ context.Context, st calsyncd.AlertState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[[2]string{st.Condition, st.Subject}] = st
	return nil
}

func (m *memory) DeleteAlertState(_ context.Context, condition, subject string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, [2]string{condition, subject})
	return nil
}

// clock is a settable clock for the reminders.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// counts is an alert.Observer.
type counts struct {
	mu sync.Mutex
	m  map[string]int // "event/result"
}

func (c *counts) AlertSent(event, result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]int{}
	}
	c.m[event+"/"+result]++
}

func (c *counts) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

// syncBuffer is a log sink safe for the notifier's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// setup is a notifier on cfg's alerts.
type setup struct {
	cfg    *config.Config
	mem    alert.Memory
	clock  *clock
	client *http.Client
	logs   *syncBuffer
	counts *counts
	o      alert.Options
}

func newSetup(t *testing.T, client *http.Client, alerts ...config.Alert) *setup {
	t.Helper()
	cfg := config.Default()
	cfg.Alerts = alerts
	s := &setup{cfg: cfg, mem: newMemory(), clock: &clock{t: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)},
		client: client, logs: &syncBuffer{}, counts: &counts{}}
	return s
}

// start builds a notifier; the test's cleanup closes it.
func (s *setup) start(t *testing.T) *alert.Notifier {
	t.Helper()
	o := s.o
	o.Config = func() *config.Config { return s.cfg }
	o.Memory, o.Now, o.Client, o.Observer = s.mem, s.clock.Now, s.client, s.counts
	o.Logger = slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	n := alert.New(o)
	t.Cleanup(func() { n.Close(context.Background()) })
	return n
}

// at stamps a settled run with the clock's time, as settle does.
func (s *setup) at(r calsyncd.Settled) calsyncd.Settled {
	r.Run.FinishedAt = s.clock.Now()
	return r
}

// flush closes n, so that everything it was handed is delivered.
func flush(t *testing.T, n *alert.Notifier) {
	t.Helper()
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// settled is a run that settled on the given state.
func settled(sub string, to calsyncd.State) calsyncd.Settled {
	return calsyncd.Settled{Subscription: sub, Account: "default", From: calsyncd.StateActive, To: to,
		Run: calsyncd.Run{SubscriptionID: sub, Outcome: calsyncd.OutcomeOK}}
}

func failing(sub string, errs int) calsyncd.Settled {
	s := settled(sub, calsyncd.StateActive)
	if errs >= 3 {
		s.To = calsyncd.StateError
	}
	s.ConsecutiveErrors = errs
	s.Run.Outcome, s.Run.ErrorClass, s.Run.Error = calsyncd.OutcomeFailed, calsyncd.ClassFeedRejected, "feed: the feed is not there (404 Not Found) — check the URL"
	return s
}

func contains(body []byte, words ...string) bool {
	for _, w := range words {
		if !strings.Contains(string(body), w) {
			return false
		}
	}
	return true
}
