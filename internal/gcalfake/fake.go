// Package gcalfake is an in-process emulator of the Google Calendar v3 REST
// API, faithful to Google's ids, error shapes and delete semantics. The real
// Go client talks to it (option.WithEndpoint + option.WithHTTPClient), so
// tests and `calsyncd demo` exercise the same code that talks to Google.
// Where Google's documentation is silent, Readings switch between the
// plausible answers, so that tests can run under each.
package gcalfake

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	calendar "google.golang.org/api/calendar/v3"
)

// BasePath is where the API lives on the emulator's host; pass
// URL+BasePath to option.WithEndpoint.
const BasePath = "/calendar/v3/"

// Options configure a Server.
type Options struct {
	// Now is the emulator's clock (default time.Now, which testing/synctest
	// fakes); quotas, usage limits and etags read it.
	Now func() time.Time
	// Sleep waits on the emulator's clock (default time.Sleep).
	Sleep func(time.Duration)
	// Latency delays every answer, so that requests overlap as they do
	// with Google.
	Latency time.Duration
	// Seed makes generated ids and injected faults reproducible.
	Seed uint64
	// Quota, UsageLimit and Faults can also be changed later with SetQuota,
	// SetUsageLimit and SetFaults.
	Quota      Quota
	UsageLimit UsageLimit
	Faults     Faults
	// Readings choose Google's behaviour where its documentation is
	// silent; the zero value is the emulator's default. SetReadings
	// changes them later.
	Readings Readings
	// AutoCreateCalendars makes every calendar id a request names exist
	// (created empty, owned by everyone, in AutoCreateTimeZone or UTC) on
	// first use, "primary" included: `calsyncd demo --config` accepts
	// whatever calendars a configuration names.
	AutoCreateCalendars bool
	AutoCreateTimeZone  string
}

// Server is the emulator. It is an http.Handler.
type Server struct {
	mu      sync.Mutex
	now     func() time.Time
	sleep   func(time.Duration)
	latency time.Duration
	seed    uint64
	rng     *rand.Rand
	// draws counts the fault draws per kind and request (drawLocked).
	draws     map[string]int
	calendars map[string]*calendarState
	// primary is each user's primary calendar, the one the id "primary"
	// names for them ("": every user without one of their own).
	primary  map[string]string
	etagSeq  int64
	stats    Stats
	inFlight int
	access   accessRules
	mux      *http.ServeMux

	quota      Quota
	buckets    map[string]*bucket
	usageLimit UsageLimit
	usage      map[string]*usage
	faults     Faults
	readings   Readings
	// revoked are bearer tokens Google no longer accepts (Revoke).
	revoked map[string]bool
	// autoCreate: unknown calendar ids are created on first use, in
	// autoZone.
	autoCreate bool
	autoZone   string
}

type calendarState struct {
	id       string
	summary  string
	timeZone string
	events   map[string]*stored
	// opaque maps the opaque instance ids given out to their instances.
	opaque map[string]opaqueRef
}

type stored struct {
	ev *calendar.Event
	// purged: deleted and the bin emptied; the id stays unusable.
	purged bool
}

// Stats counts requests, for tests and benchmarks.
type Stats struct {
	Requests int
	// ByOp counts requests by operation ("insert", "update", "get", ...).
	ByOp map[string]int
	// Errors counts error answers by HTTP status.
	Errors map[int]int
	// Accepted counts requests answered with success; AcceptedWrites the
	// writes among them (including those whose answer was then lost).
	Accepted       int
	AcceptedWrites int
	// RateLimited counts writes refused by the write quota, UsageLimited
	// those refused by the usage limit.
	RateLimited  int
	UsageLimited int
	// Faults counts injected 500, 503 and 401 answers; LostResponses the
	// accepted writes whose answer was dropped.
	Faults        int
	LostResponses int
	// MaxInFlight is the most requests the emulator served at once.
	MaxInFlight int
}

// Rejected is how many writes the quota and the usage limit refused.
func (s Stats) Rejected() int { return s.RateLimited + s.UsageLimited }

// New returns an emulator with no calendars.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = time.Sleep
	}
	s := &Server{
		now:        opts.Now,
		sleep:      opts.Sleep,
		latency:    opts.Latency,
		seed:       opts.Seed,
		rng:        rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15)),
		draws:      map[string]int{},
		calendars:  map[string]*calendarState{},
		stats:      Stats{ByOp: map[string]int{}, Errors: map[int]int{}},
		quota:      opts.Quota,
		buckets:    map[string]*bucket{},
		usageLimit: opts.UsageLimit,
		usage:      map[string]*usage{},
		faults:     opts.Faults,
		readings:   opts.Readings,
		autoCreate: opts.AutoCreateCalendars,
		autoZone:   opts.AutoCreateTimeZone,
	}
	mux := http.NewServeMux()
	p := strings.TrimSuffix(BasePath, "/")
	mux.HandleFunc("GET "+p+"/users/me/calendarList", s.serve("calendarList.list", s.listCalendars))
	mux.HandleFunc("GET "+p+"/calendars/{cal}", s.handle("calendars.get", s.getCalendar))
	mux.HandleFunc("GET "+p+"/calendars/{cal}/events", s.handle("list", s.listEvents))
	mux.HandleFunc("POST "+p+"/calendars/{cal}/events", s.handle("insert", s.insertEvent))
	mux.HandleFunc("GET "+p+"/calendars/{cal}/events/{id}", s.handle("get", s.getEvent))
	mux.HandleFunc("GET "+p+"/calendars/{cal}/events/{id}/instances", s.handle("instances", s.listInstances))
	mux.HandleFunc("PUT "+p+"/calendars/{cal}/events/{id}", s.handle("update", s.updateEvent))
	mux.HandleFunc("PATCH "+p+"/calendars/{cal}/events/{id}", s.handle("patch", s.patchEvent))
	mux.HandleFunc("DELETE "+p+"/calendars/{cal}/events/{id}", s.handle("delete", s.deleteEvent))
	s.mux = mux
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

// handlerFunc serves one operation under the server's lock and returns the
// JSON body to send (nil for 204) or an API error.
type handlerFunc func(r *http.Request, cal *calendarState) (any, *APIError)

func (s *Server) handle(op string, h handlerFunc) http.HandlerFunc {
	return s.serve(op, func(r *http.Request) (any, *APIError) {
		user := userOf(r)
		cal, ok := s.calendarLocked(user, r.PathValue("cal"))
		if !ok {
			return nil, errNotFound()
		}
		if apiErr := s.permitLocked(op, user, cal.id); apiErr != nil {
			return nil, apiErr
		}
		body, apiErr := h(r, cal)
		s.withRoleLocked(body, user, cal.id)
		return body, apiErr
	})
}

// serve answers one operation: h runs under the server's lock once the
// request passed the revoked tokens, the injected faults and the quotas,
// and returns the JSON body to send (nil for 204) or an API error.
func (s *Server) serve(op string, h func(r *http.Request) (any, *APIError)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.inFlight++
		s.stats.MaxInFlight = max(s.stats.MaxInFlight, s.inFlight)
		latency := s.latency
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.inFlight--
			s.mu.Unlock()
		}()
		if latency > 0 {
			s.sleep(latency)
		}
		// Read only when a fault is drawn.
		key := sync.OnceValue(func() string { return requestKey(op, r) })

		s.mu.Lock()
		s.stats.Requests++
		s.stats.ByOp[op]++
		var (
			body   any
			apiErr = s.refusedLocked(r)
			lost   bool
		)
		if apiErr == nil {
			apiErr = s.admitLocked(op, userOf(r), r.PathValue("cal"), key)
		}
		if apiErr == nil {
			body, apiErr = h(r)
		}
		if apiErr != nil {
			s.stats.Errors[apiErr.Code]++
		} else {
			s.stats.Accepted++
			if isWrite(op) {
				s.stats.AcceptedWrites++
				if op == "insert" {
					s.recordCreateLocked(userOf(r))
				}
				if p := s.faults.LostResponse; p > 0 && s.drawLocked("lost", key()) < p {
					lost = true
					s.stats.LostResponses++
				}
			}
		}
		s.mu.Unlock()
		if lost {
			// The write is done; the answer never arrives. net/http closes
			// the connection without a response, and the in-memory
			// transport reports a connection lost.
			panic(http.ErrAbortHandler)
		}
		if apiErr != nil {
			apiErr.write(w)
			return
		}
		if body == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_ = json.NewEncoder(w).Encode(body)
	}
}
