package status

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// Daemon is the running daemon as the server sees it.
type Daemon interface {
	Scheduler
	Trigger(id string, opts subscription.Options) (int64, error)
}

// ServerOptions configure a Server.
type ServerOptions struct {
	Source  Source
	Config  func() *config.Config
	Daemon  Daemon
	Pacers  func() []Pacer
	Metrics *Metrics
	// Token, when set, is required as a bearer token on every endpoint but
	// /healthz. Without it, POST /subscriptions/{id}/sync starts only an
	// ordinary sync, no more often than TriggerInterval and never before
	// the feed's Retry-After.
	Token string
	// TriggerInterval is, without a Token, the least time between a
	// subscription's last run and a run a POST starts (default 5 min).
	TriggerInterval time.Duration
	Log             *slog.Logger
	Now             func() time.Time

	// StateWritable, when set, says whether the state directory can be
	// written (every run needs it); /healthz degrades when it cannot.
	StateWritable func() error
}

// Server is the status endpoint.
type Server struct {
	opts ServerOptions
	srv  *http.Server

	mu sync.Mutex
	// triggered is when, without a token, a POST last started each
	// subscription's run.
	triggered map[string]time.Time
	// key is the hand-off key Serve wrote ("" before).
	key string
}

// defaultTriggerInterval is ServerOptions.TriggerInterval's default.
const defaultTriggerInterval = 5 * time.Minute

// NewServer returns a status server.
func NewServer(opts ServerOptions) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Pacers == nil {
		opts.Pacers = func() []Pacer { return nil }
	}
	if opts.TriggerInterval <= 0 {
		opts.TriggerInterval = defaultTriggerInterval
	}
	s := &Server{opts: opts, triggered: map[string]time.Time{}}
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second}
	return s
}

// CheckListen refuses to listen beyond loopback without a token: the status
// shows calendar ids, error details and a way to trigger syncs.
func CheckListen(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if !config.IsLoopbackHost(host) && token == "" {
		return errors.New("status: refusing to listen on " + addr + " beyond loopback without status.token; set one (e.g. token: ${CALSYNCD_STATUS_TOKEN}) or listen on 127.0.0.1")
	}
	return nil
}

// Handler is the server's routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.Handle("GET /status", s.auth(http.HandlerFunc(s.status)))
	mux.Handle("GET /metrics", s.auth(s.opts.Metrics.Handler()))
	mux.Handle("GET /{$}", s.auth(http.HandlerFunc(s.page)))
	mux.Handle("GET /subscriptions/{id}", s.auth(http.HandlerFunc(s.subscriptionPage)))
	mux.Handle("POST /subscriptions/{id}/sync", s.auth(http.HandlerFunc(s.trigger)))
	return s.guard(mux)
}

// Serve serves on ln until Shutdown. Without a token, it first writes the
// hand-off key `calsyncd sync` proves itself with into the state directory.
func (s *Server) Serve(ln net.Listener) error {
	if cfg := s.config(); s.opts.Token == "" && cfg != nil && cfg.StateDir != "" {
		key, err := writeHandOffKey(cfg.StateDir)
		if err != nil {
			s.opts.Log.Warn("status: calsyncd sync cannot hand this daemon a sync with options (no hand-off key)", "error", err)
		}
		s.mu.Lock()
		s.key = key
		s.mu.Unlock()
	}
	err := s.srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops the server, waiting for requests in flight.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

func (s *Server) auth(next http.Handler) http.Handler {
	if s.opts.Token == "" {
		return next
	}
	want := []byte("Bearer " + s.opts.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="calsyncd"`)
			http.Error(w, "unauthorized: send Authorization: Bearer <status.token>", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if s.opts.Daemon == nil || !s.opts.Daemon.Running() {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("unhealthy: the scheduler is not running\n"))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.opts.Source.Ping(ctx); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("unhealthy: the state database does not answer\n"))
		return
	}
	if s.opts.StateWritable != nil {
		if err := s.opts.StateWritable(); err != nil {
			s.opts.Log.Error("health check: the state directory is not writable", "error", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("unhealthy: the state directory is not writable; no sync can run (see the daemon's log)\n"))
			return
		}
	}
	w.Write([]byte("ok\n"))
}

func (s *Server) scheduler() Scheduler {
	if s.opts.Daemon != nil {
		return s.opts.Daemon
	}
	return nil
}

func (s *Server) report(ctx context.Context, p Page) (*Report, error) {
	return BuildPage(ctx, s.opts.Source, s.opts.Config(), s.scheduler(), s.opts.Pacers(), s.opts.Now(), p)
}

// pageParams reads a page's limit, after and before from the query.
func pageParams(r *http.Request) (Page, error) {
	q := r.URL.Query()
	p := Page{Limit: DefaultPageLimit, After: q.Get("after"), Before: q.Get("before")}
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > MaxPageLimit {
			return p, fmt.Errorf("limit must be a whole number from 1 to %d (default %d), not %q", MaxPageLimit, DefaultPageLimit, q.Get("limit"))
		}
		p.Limit = n
	}
	if p.After != "" && p.Before != "" {
		return p, errors.New("give after (the next page) or before (the previous page), not both")
	}
	return p, nil
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	p, err := pageParams(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	rep, err := s.report(r.Context(), p)
	if err != nil {
		s.opts.Log.Error("status report failed", "error", err)
		http.Error(w, "the status could not be read from the state database", http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	p, err := pageParams(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rep, err := s.report(r.Context(), p)
	if err != nil {
		s.opts.Log.Error("status page failed", "error", err)
		http.Error(w, "the status could not be read from the state database", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := RenderPage(w, rep); err != nil {
		s.opts.Log.Error("status page failed", "error", err)
	}
}

// subscriptionPage is one subscription's page: its recent runs and what
// each wrote.
func (s *Server) subscriptionPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rep, err := buildOne(r.Context(), s.opts.Source, s.opts.Config(), s.scheduler(), s.opts.Pacers(), s.opts.Now(), id)
	var d *Detail
	if err == nil {
		d, err = BuildDetail(r.Context(), s.opts.Source, rep, id)
	}
	switch {
	case errors.Is(err, ErrNoSubscription):
		http.Error(w, "no subscription with that id; the status page at / lists them", http.StatusNotFound)
		return
	case err != nil:
		s.opts.Log.Error("subscription page failed", "error", err)
		http.Error(w, "the status could not be read from the state database", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := RenderDetail(w, d); err != nil {
		s.opts.Log.Error("subscription page failed", "error", err)
	}
}

// trigger runs a subscription now. The body, when there is one, is the
// operator's options as JSON (what `calsyncd sync` hands off); an option
// this daemon does not know is refused, never dropped.
func (s *Server) trigger(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if s.opts.Daemon == nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "no daemon"})
		return
	}
	opts, err := triggerOptions(w, r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	release := func() {}
	if s.opts.Token == "" && !s.fromOperator(r) {
		// Anyone on this machine can reach a tokenless endpoint: they
		// may ask for what the schedule would do anyway, a little
		// sooner, and no more.
		if names := operatorOptions(opts); len(names) > 0 {
			s.opts.Log.Warn("sync request refused: its options need status.token", "subscription", id, "options", strings.Join(names, ","))
			writeJSON(w, http.StatusForbidden, map[string]string{"error": strings.Join(names, " and ") +
				" over the status endpoint needs status.token: without one, a POST starts only an ordinary sync. " +
				"Set status.token, or run calsyncd sync " + flags(names) + " " + id + " on this machine as a user who can read the state directory (it hands the daemon the key it keeps there)"})
			return
		}
		var wait time.Duration
		var err error
		release, wait, err = s.reserve(r.Context(), id)
		if err != nil {
			s.opts.Log.Error("sync request failed", "subscription", id, "error", err)
			http.Error(w, "the subscription's state could not be read from the state database", http.StatusInternalServerError)
			return
		}
		if wait > 0 {
			secs := int64((wait + time.Second - 1) / time.Second)
			w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"retry_after": secs, "error": fmt.Sprintf(
				"without status.token, a sync can be requested no sooner than %s after the subscription's last run, nor before its feed's Retry-After: try again in %ds", s.opts.TriggerInterval, secs)})
			return
		}
	}
	runID, err := s.opts.Daemon.Trigger(id, opts)
	if err != nil {
		release()
	}
	var held *subscription.LeaseHeldError
	switch {
	case err == nil:
		s.opts.Log.Info("sync requested over HTTP", "subscription", id, "run", runID,
			"allow_deletes", opts.AllowDeletes, "reconcile", opts.Reconcile)
		writeJSON(w, http.StatusAccepted, map[string]any{"subscription": id, "run_id": runID})
	case errors.Is(err, subscription.ErrUnknownSubscription):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no subscription with that id"})
	case errors.Is(err, subscription.ErrBusy):
		writeJSON(w, http.StatusConflict, map[string]string{"error": "a sync of this subscription is already running"})
	case errors.As(err, &held):
		msg := "this daemon does not hold the lease of account " + held.Account
		if held.Holder != "" {
			msg += "; " + held.Holder + " holds it: ask that replica"
		}
		writeJSON(w, http.StatusConflict, map[string]string{"error": msg, "account": held.Account, "holder": held.Holder})
	case errors.Is(err, subscription.ErrStopping):
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "the daemon is shutting down"})
	default:
		s.opts.Log.Error("sync request failed", "subscription", id, "error", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "the sync could not start; see the daemon's log"})
	}
}

func (s *Server) config() *config.Config {
	if s.opts.Config == nil {
		return nil
	}
	return s.opts.Config()
}

// fromOperator: without a token, the request carries the hand-off key.
func (s *Server) fromOperator(r *http.Request) bool {
	s.mu.Lock()
	key := s.key
	s.mu.Unlock()
	return isKey(r.Header.Get("Authorization"), key)
}

// reserve is how long a tokenless trigger of id must wait: until
// TriggerInterval after its last run (recorded, or started by a POST) and
// until its feed's Retry-After (FetchNotBefore). When it need not wait,
// the trigger is recorded now, and release forgets it (the run did not
// start).
func (s *Server) reserve(ctx context.Context, id string) (release func(), wait time.Duration, err error) {
	states, err := s.opts.Source.Subscriptions(ctx)
	if err != nil {
		return nil, 0, err
	}
	runs, err := s.opts.Source.Runs(ctx, id, 1)
	if err != nil {
		return nil, 0, err
	}
	now := s.opts.Now()
	var next time.Time
	for _, st := range states {
		if st.ID == id && st.FetchNotBefore.After(next) {
			next = st.FetchNotBefore
		}
	}
	if len(runs) > 0 && !runs[0].StartedAt.IsZero() {
		next = later(next, runs[0].StartedAt.Add(s.opts.TriggerInterval))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	last, had := s.triggered[id]
	if had {
		next = later(next, last.Add(s.opts.TriggerInterval))
	}
	if next.After(now) {
		return nil, next.Sub(now), nil
	}
	s.triggered[id] = now
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.triggered[id].Equal(now) {
			if had {
				s.triggered[id] = last
			} else {
				delete(s.triggered, id)
			}
		}
	}, 0, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// operatorOptions names the options opts sets, as JSON names them: every
// one an operator gives (allow_deletes, reconcile and any added later) is
// more than an ordinary sync.
func operatorOptions(opts subscription.Options) []string {
	b, err := json.Marshal(opts)
	if err != nil {
		return []string{"options"}
	}
	var set map[string]json.RawMessage
	if err := json.Unmarshal(b, &set); err != nil {
		return []string{"options"}
	}
	names := make([]string, 0, len(set))
	for k := range set {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// flags are the calsyncd sync flags of options named as JSON names them.
func flags(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "--" + strings.ReplaceAll(n, "_", "-")
	}
	return strings.Join(out, " ")
}

// triggerOptions reads a trigger's options; an empty body is a plain sync.
func triggerOptions(w http.ResponseWriter, r *http.Request) (subscription.Options, error) {
	var opts subscription.Options
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
	if err != nil {
		return opts, errors.New("the request body could not be read")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return opts, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&opts); err != nil {
		return subscription.Options{}, fmt.Errorf("the sync's options were refused (%v); is the daemon older than this calsyncd?", err)
	}
	return opts, nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
