package subscription_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/store"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

const testCalendar = "team@group.calendar.google.com"

// harness wires a runner to the emulator, a feed server whose body the test
// controls, and a store in a temporary directory.
type harness struct {
	t      *testing.T
	fake   *gcalfake.Server
	api    *httptest.Server
	feeds  *httptest.Server
	cfg    *config.Config
	dbPath string
	store  *store.Store
	runner *subscription.Runner
	// owner names the installation (the zero Owner: the legacy form).
	owner calsyncd.Owner
	// mem: no sockets (newMemHarness).
	mem bool

	mu   sync.Mutex
	body []byte
	// paths are bodies for other feed paths than the subscription's.
	paths map[string][]byte
	// status, when set, is the feed server's answer instead of 200.
	status int
	// onFetch, when set, is called as the feed server starts to answer.
	onFetch func()
	// contentType, when set, is the feed's Content-Type (else text/calendar).
	contentType string
}

func newHarness(t *testing.T, feedFile string) *harness {
	t.Helper()
	h := &harness{t: t, fake: gcalfake.New(gcalfake.Options{Seed: 1})}
	h.fake.AddCalendar(testCalendar, "Europe/Berlin")
	h.api = httptest.NewServer(h.fake)
	t.Cleanup(h.api.Close)
	h.startFeeds()
	if feedFile != "" {
		h.setFeedFile(feedFile)
	}
	h.cfg = config.Default()
	h.cfg.StateDir = t.TempDir()
	h.cfg.Google.Endpoint = h.api.URL + gcalfake.BasePath
	h.cfg.Subscriptions = []config.Subscription{{ID: "team", URL: h.feeds.URL + "/team.ics", Calendar: testCalendar}}
	h.dbPath = filepath.Join(h.cfg.StateDir, "calsyncd.db")
	h.open()
	return h
}

// sibling is a second installation named owner beside h: its own feed
// server, configuration and store, the same Google and the same
// subscription ids.
func (h *harness) sibling(owner string) *harness {
	h.t.Helper()
	s := &harness{t: h.t, fake: h.fake, api: h.api, owner: calsyncd.Owner{Name: owner}, mem: h.mem}
	url := memHarnessURL
	if !h.mem {
		s.startFeeds()
		url = s.feeds.URL
	}
	cfg := *h.cfg
	cfg.StateDir = h.t.TempDir()
	cfg.Subscriptions = []config.Subscription{{ID: "team", URL: url + "/team.ics", Calendar: testCalendar}}
	s.cfg = &cfg
	s.dbPath = filepath.Join(cfg.StateDir, "calsyncd.db")
	s.open()
	return s
}

// startFeeds starts the feed server that serves h.body.
func (h *harness) startFeeds() {
	h.feeds = httptest.NewServer(h.feedHandler())
	h.t.Cleanup(h.feeds.Close)
}

// feedHandler answers feed requests with h.body (or h.status).
func (h *harness) feedHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.onFetch != nil {
			// Half the body, then the shutdown, while the rest is awaited.
			w.Header().Set("Content-Type", "text/calendar")
			w.Write(h.body[:len(h.body)/2])
			w.(http.Flusher).Flush()
			h.onFetch()
			h.mu.Unlock()
			<-r.Context().Done()
			h.mu.Lock()
			return
		}
		if b, ok := h.paths[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "text/calendar")
			w.Write(b)
			return
		}
		if h.status != 0 {
			http.Error(w, http.StatusText(h.status), h.status)
			return
		}
		ct := "text/calendar"
		if h.contentType != "" {
			ct = h.contentType
		}
		w.Header().Set("Content-Type", ct)
		w.Write(h.body)
	})
}

// memHarnessURL is where an in-memory harness pretends its servers are:
// nothing ever dials it.
const memHarnessURL = "http://127.0.0.1:9"

// newMemHarness is a harness with no sockets: Google and the feed server
// answer through in-memory transports, so it runs inside a
// testing/synctest bubble, in virtual time.
func newMemHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, fake: gcalfake.New(gcalfake.Options{Seed: 1}), mem: true}
	h.fake.AddCalendar(testCalendar, "Europe/Berlin")
	h.cfg = config.Default()
	h.cfg.StateDir = t.TempDir()
	h.cfg.Google.Endpoint = memHarnessURL + gcalfake.BasePath
	h.cfg.Subscriptions = []config.Subscription{{ID: "team", URL: memHarnessURL + "/team.ics", Calendar: testCalendar}}
	h.dbPath = filepath.Join(h.cfg.StateDir, "calsyncd.db")
	h.open()
	return h
}

// handlerTransport serves requests with a handler in memory, streaming its
// answer as a server would: the response comes with the first byte or
// flush, and a cancelled request breaks off its body.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	rw := &pipeResponse{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		defer pw.Close()
		t.h.ServeHTTP(rw, req)
		rw.WriteHeader(http.StatusOK)
	}()
	go func() {
		select {
		case <-req.Context().Done():
			pr.CloseWithError(req.Context().Err())
		case <-served:
		}
	}()
	select {
	case <-rw.ready:
	case <-req.Context().Done():
		pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	return &http.Response{Status: strconv.Itoa(rw.code) + " " + http.StatusText(rw.code), StatusCode: rw.code,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: rw.header, Body: pr, ContentLength: -1, Request: req}, nil
}

type pipeResponse struct {
	header http.Header
	pw     *io.PipeWriter
	code   int
	once   sync.Once
	ready  chan struct{}
}

func (r *pipeResponse) Header() http.Header { return r.header }

func (r *pipeResponse) WriteHeader(code int) {
	r.once.Do(func() { r.code = code; close(r.ready) })
}

func (r *pipeResponse) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.pw.Write(b)
}

func (r *pipeResponse) Flush() { r.WriteHeader(http.StatusOK) }

// open (re)opens the store and builds a runner on it.
func (h *harness) open() {
	h.t.Helper()
	if h.store != nil {
		// A restart: the old process's store goes with it (a second
		// store left open on a file the test then deletes would keep
		// SQLite's view of the deleted file alive).
		h.store.Close()
	}
	st, err := store.Open(context.Background(), "sqlite", h.dbPath)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { st.Close() })
	h.store = st
	client, fetcher := &http.Client{Transport: h.fake.Transport("")}, fetch.NewFetcher(0, 0, 20<<20, feed.CheckBody)
	if h.mem {
		fetcher.Client = &http.Client{Transport: handlerTransport{h.feedHandler()}}
	} else {
		client = h.api.Client()
	}
	svc, err := calendar.NewService(context.Background(),
		option.WithEndpoint(h.cfg.Google.Endpoint), option.WithHTTPClient(client))
	if err != nil {
		h.t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Pacing and retries are the writer's own business, tested there; here
	// they only need to be quick.
	opts := gcalwriter.Options{Logger: log, Owner: h.owner, Spacing: time.Millisecond, RetryBase: time.Millisecond, RetryCap: 4 * time.Millisecond}
	w := gcalwriter.New(svc, opts)
	// Accounts other than the default act as the emulator's user of the
	// same name, each through a writer of its own.
	var mu sync.Mutex
	others := map[string]*gcalwriter.Writer{}
	writer := func(account string) (subscription.Writer, error) {
		if account == "" || account == config.DefaultAccount {
			return w, nil
		}
		mu.Lock()
		defer mu.Unlock()
		if others[account] == nil {
			c := h.fake.Client(account)
			svc, err := calendar.NewService(context.Background(), option.WithEndpoint(h.cfg.Google.Endpoint), option.WithHTTPClient(c))
			if err != nil {
				return nil, err
			}
			others[account] = gcalwriter.New(svc, opts)
		}
		return others[account], nil
	}
	h.runner = &subscription.Runner{
		Config:  h.cfg,
		Store:   st,
		Owner:   h.owner,
		Fetcher: fetcher,
		Writer:  writer,
		Log:     log,
	}
}

func (h *harness) setFeedFile(path string) {
	h.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		h.t.Fatal(err)
	}
	h.setFeed(b)
}

func (h *harness) setFeed(b []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.body = b
}

func (h *harness) feed() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]byte(nil), h.body...)
}

func (h *harness) sync() subscription.Report {
	h.t.Helper()
	return h.syncWith(subscription.Options{})
}

func (h *harness) syncWith(opts subscription.Options) subscription.Report {
	h.t.Helper()
	rep, err := h.runner.Sync(context.Background(), h.cfg.Subscriptions[0], opts)
	if err != nil {
		h.t.Fatalf("sync: %v", err)
	}
	return rep
}

// writes counts the write requests the emulator has seen.
func (h *harness) writes() map[string]int {
	st := h.fake.Stats()
	return map[string]int{"insert": st.ByOp["insert"], "update": st.ByOp["update"], "patch": st.ByOp["patch"], "delete": st.ByOp["delete"]}
}

// agenda is what a person sees in the test calendar around the sample
// feed's dates.
func (h *harness) agenda() []gcalfake.Occurrence {
	return h.fake.Agenda(testCalendar, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 12, 31, 0, 0, 0, 0, time.UTC))
}

func totalWrites(m map[string]int) int { return m["insert"] + m["update"] + m["patch"] + m["delete"] }

// captureLog sends the runner's log lines (debug and up) to a buffer.
func captureLog(h *harness) *lockedBuffer {
	logs := &lockedBuffer{}
	h.runner.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return logs
}

var allowDeletes = subscription.Options{AllowDeletes: true}
