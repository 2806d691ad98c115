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
	// /healthz.
	Token string
	Log   *slog.Logger
	Now   func() time.Time

	// StateWritable, when set, says whether the state directory can be
	// written (every run needs it); /healthz degrades when it cannot.
	StateWritable func() error
}

// Server is the status endpoint.
type Server struct {
	opts ServerOptions
	srv  *http.Server
}

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
	s := &Server{opts: opts}
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
	mux.Handle("POST /subscriptions/{id}/sync", s.auth(http.HandlerFunc(s.trigger)))
	return s.guard(mux)
}

// Serve serves on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
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

func (s *Server) report(ctx context.Context) (*Report, error) {
	var sched Scheduler
	if s.opts.Daemon != nil {
		sched = s.opts.Daemon
	}
	return Build(ctx, s.opts.Source, s.opts.Config(), sched, s.opts.Pacers(), s.opts.Now())
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	rep, err := s.report(r.Context())
	if err != nil {
		s.opts.Log.Error("status report failed", "error", err)
		http.Error(w, "the status could not be read from the state database", http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	rep, err := s.report(r.Context())
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
	runID, err := s.opts.Daemon.Trigger(id, opts)
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
