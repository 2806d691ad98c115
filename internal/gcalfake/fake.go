// Package gcalfake is an in-process emulator of the Google Calendar v3 REST
// API, faithful to Google's ids, error shapes and delete semantics. The real
// Go client talks to it (option.WithEndpoint + option.WithHTTPClient), so
// tests and `calsyncd demo` exercise the same code that talks to Google.
// Where Google's documentation is silent, Readings switch between the
// plausible answers, so that tests can run under each.
package gcalfake

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
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

// calendarLocked is the calendar a request's id names for user; with
// AutoCreateCalendars an unknown one is created.
func (s *Server) calendarLocked(user, id string) (*calendarState, bool) {
	id = s.calendarIDLocked(user, id)
	cal, ok := s.calendars[id]
	if ok || !s.autoCreate || id == "" {
		return cal, ok
	}
	if id == "primary" {
		// Every user without a primary of their own shares this one.
		if s.primary == nil {
			s.primary = map[string]string{}
		}
		s.primary[""] = id
	}
	s.addLocked(Calendar{ID: id, TimeZone: s.autoZone})
	return s.calendars[id], true
}

// AddCalendar creates a calendar the API can write to.
func (s *Server) AddCalendar(id, timeZone string) {
	s.Add(Calendar{ID: id, TimeZone: timeZone})
}

// Calendar describes a calendar for Add.
type Calendar struct {
	ID string
	// Summary is its name (default: the id, as Google names a calendar
	// created without one after its owner).
	Summary string
	// TimeZone defaults to UTC.
	TimeZone string
	// Role is everyone's role on it (default owner): RoleReader or
	// RoleFreeBusyReader make a calendar the API cannot write to, as one
	// a person subscribed to or was shared read-only. Share refines it
	// per user.
	Role Role
}

// Add creates a calendar (replacing one of the same id).
func (s *Server) Add(c Calendar) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addLocked(c)
}

func (s *Server) addLocked(c Calendar) {
	if c.TimeZone == "" {
		c.TimeZone = "UTC"
	}
	if c.Summary == "" {
		c.Summary = c.ID
	}
	s.calendars[c.ID] = &calendarState{id: c.ID, summary: c.Summary, timeZone: c.TimeZone, events: map[string]*stored{}, opaque: map[string]opaqueRef{}}
	if c.Role != "" {
		if s.access == nil {
			s.access = accessRules{}
		}
		s.access[c.ID] = map[string]Role{"": c.Role}
	}
}

// SetPrimary makes calendarID (added with AddCalendar) user's primary
// calendar: the id "primary" names it in every request of the user, and
// calendars.get("primary") answers its own id, as Google answers the
// account's address. An empty user sets it for every user without one.
func (s *Server) SetPrimary(user, calendarID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.primary == nil {
		s.primary = map[string]string{}
	}
	s.primary[user] = calendarID
}

// calendarIDLocked is the calendar a request's id names for user.
func (s *Server) calendarIDLocked(user, id string) string {
	if id != "primary" {
		return id
	}
	if c, ok := s.primary[user]; ok {
		return c
	}
	if c, ok := s.primary[""]; ok {
		return c
	}
	return id
}

// Stats returns a copy of the request counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.ByOp, st.Errors = maps.Clone(s.stats.ByOp), maps.Clone(s.stats.Errors)
	return st
}

// ResetStats zeroes the request counters.
func (s *Server) ResetStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats = Stats{ByOp: map[string]int{}, Errors: map[int]int{}}
}

// Events returns copies of the calendar's live (not cancelled) stored
// events, ordered by start and id: single events, recurring masters and
// the exceptions of their instances. Agenda is what a person sees.
func (s *Server) Events(calendarID string) []*calendar.Event {
	return s.events(calendarID, false)
}

// AllEvents includes cancelled (deleted) events.
func (s *Server) AllEvents(calendarID string) []*calendar.Event {
	return s.events(calendarID, true)
}

func (s *Server) events(calendarID string, withDeleted bool) []*calendar.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	cal, ok := s.calendars[calendarID]
	if !ok {
		return nil
	}
	v := s.view(cal)
	var out []*calendar.Event
	for _, st := range cal.events {
		if st.purged || (!withDeleted && (st.ev.Status == "cancelled" || st.ev.RecurringEventId != "" && !v.visibleException(st.ev))) {
			continue
		}
		out = append(out, cloneEvent(st.ev))
	}
	sortEvents(out)
	return out
}

// Seed stores an event directly, bypassing the API (a person's own event,
// or a fixture). It gets an id if it has none.
func (s *Server) Seed(calendarID string, ev *calendar.Event) *calendar.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	cal := s.calendars[calendarID]
	ev = cloneEvent(ev)
	if ev.Id == "" {
		ev.Id = s.newID()
	}
	s.stamp(ev, true)
	cal.events[ev.Id] = &stored{ev: ev}
	return cloneEvent(ev)
}

// Delete marks an event (or one instance of a recurring event) deleted as
// a person would in the UI.
func (s *Server) Delete(calendarID, eventID string) {
	s.Edit(calendarID, eventID, func(ev *calendar.Event) { ev.Status = "cancelled" })
}

// Edit changes an event (or one instance of a recurring event, which
// becomes an exception) as a person would in the UI (new etag). An
// instance can be named by the id the API gives it or, whatever the
// readings, by its derived id "{seriesId}_{suffix}". Editing a series
// applies Readings.SeriesUpdate to its exceptions, as an API update does.
func (s *Server) Edit(calendarID, eventID string, edit func(*calendar.Event)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cal := s.calendars[calendarID]
	v := s.view(cal)
	st, in := v.lookup(eventID, true)
	if st == nil {
		if in == nil {
			return
		}
		st = v.materialize(in)
		cal.events[st.ev.Id] = st
	}
	old := cloneEvent(st.ev)
	edit(st.ev)
	s.stamp(st.ev, false)
	s.seriesUpdatedLocked(cal, old, st.ev)
}

// EmptyBin purges every deleted event of a calendar: their ids stay taken
// (insert answers 409) but can no longer be read or restored (get answers
// 404, update 403), as Google does after a person empties the bin.
func (s *Server) EmptyBin(calendarID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.calendars[calendarID].events {
		if st.ev.Status == "cancelled" {
			st.purged = true
		}
	}
}

func (s *Server) getCalendar(r *http.Request, cal *calendarState) (any, *APIError) {
	return &calendar.Calendar{Kind: "calendar#calendar", Id: cal.id, Summary: cal.summary, TimeZone: cal.timeZone, Etag: `"` + cal.id + `"`}, nil
}

func (s *Server) getEvent(r *http.Request, cal *calendarState) (any, *APIError) {
	v := s.view(cal)
	st, in := v.lookup(r.PathValue("id"), false)
	switch {
	case st != nil && !st.purged:
		return st.ev, nil
	case in != nil:
		return v.virtual(in), nil
	}
	return nil, errNotFound()
}

func (s *Server) insertEvent(r *http.Request, cal *calendarState) (any, *APIError) {
	ev, apiErr := decodeEvent(r)
	if apiErr != nil {
		return nil, apiErr
	}
	if ev.Id == "" {
		ev.Id = s.newID()
	} else if !validID(ev.Id) {
		return nil, errInvalid("Invalid resource id value.")
	}
	if _, exists := cal.events[ev.Id]; exists {
		return nil, errDuplicate()
	}
	if apiErr := cmp.Or(validateEvent(ev), s.readings.checkExRule(ev)); apiErr != nil {
		return nil, apiErr
	}
	if ev.Status == "" {
		ev.Status = "confirmed"
	}
	s.stamp(ev, true)
	cal.events[ev.Id] = &stored{ev: ev}
	return ev, nil
}

func (s *Server) updateEvent(r *http.Request, cal *calendarState) (any, *APIError) {
	st, apiErr := s.writable(r, cal)
	if apiErr != nil {
		return nil, apiErr
	}
	ev, apiErr := decodeEvent(r)
	if apiErr != nil {
		return nil, apiErr
	}
	if st.ev.RecurringEventId != "" {
		if len(ev.Recurrence) > 0 {
			return nil, errInvalidRecurrence()
		}
		// An instance's link to its series is immutable.
		ev.RecurringEventId, ev.OriginalStartTime = st.ev.RecurringEventId, st.ev.OriginalStartTime
	}
	if apiErr := cmp.Or(validateEvent(ev), s.readings.checkExRule(ev)); apiErr != nil {
		return nil, apiErr
	}
	ev.Id = st.ev.Id
	ev.Created = st.ev.Created
	ev.ICalUID = st.ev.ICalUID
	if ev.Status == "" {
		ev.Status = "confirmed"
	}
	s.stamp(ev, false)
	old := st.ev
	st.ev = ev
	cal.events[ev.Id] = st
	s.seriesUpdatedLocked(cal, old, ev)
	return ev, nil
}

func (s *Server) patchEvent(r *http.Request, cal *calendarState) (any, *APIError) {
	st, apiErr := s.writable(r, cal)
	if apiErr != nil {
		return nil, apiErr
	}
	var patch map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&patch); err != nil {
		return nil, errBadRequest("Invalid JSON payload.")
	}
	cur, _ := json.Marshal(st.ev)
	var merged map[string]json.RawMessage
	_ = json.Unmarshal(cur, &merged)
	for k, v := range patch {
		if k == "id" || k == "iCalUID" || k == "created" || k == "recurringEventId" || k == "originalStartTime" {
			continue
		}
		if string(v) == "null" {
			delete(merged, k)
			continue
		}
		merged[k] = v
	}
	raw, _ := json.Marshal(merged)
	var ev calendar.Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, errBadRequest("Invalid JSON payload.")
	}
	if apiErr := cmp.Or(validateEvent(&ev), s.readings.checkExRule(&ev)); apiErr != nil {
		return nil, apiErr
	}
	s.stamp(&ev, false)
	old := st.ev
	st.ev = &ev
	cal.events[ev.Id] = st
	s.seriesUpdatedLocked(cal, old, &ev)
	return &ev, nil
}

func (s *Server) deleteEvent(r *http.Request, cal *calendarState) (any, *APIError) {
	v := s.view(cal)
	st, in := v.lookup(r.PathValue("id"), false)
	if st == nil {
		if in == nil {
			return nil, errNotFound()
		}
		// Deleting an instance stores a cancelled exception.
		st = v.materialize(in)
	}
	if st.purged {
		return nil, errNotFound()
	}
	if st.ev.Status == "cancelled" {
		return nil, errDeleted()
	}
	if m := r.Header.Get("If-Match"); m != "" && m != st.ev.Etag {
		return nil, errConditionNotMet()
	}
	st.ev.Status = "cancelled"
	s.stamp(st.ev, false)
	cal.events[st.ev.Id] = st
	return nil, nil
}

// writable finds the event an update or patch targets and checks If-Match.
func (s *Server) writable(r *http.Request, cal *calendarState) (*stored, *APIError) {
	v := s.view(cal)
	st, in := v.lookup(r.PathValue("id"), false)
	if st == nil {
		if in == nil {
			return nil, errNotFound()
		}
		if m := r.Header.Get("If-Match"); m != "" && m != in.master.Etag {
			return nil, errConditionNotMet()
		}
		// Writing an instance makes it an exception; the write below
		// gives it its own etag.
		return v.materialize(in), nil
	}
	if st.purged {
		return nil, errForbidden()
	}
	if m := r.Header.Get("If-Match"); m != "" && m != st.ev.Etag {
		return nil, errConditionNotMet()
	}
	return st, nil
}

func decodeEvent(r *http.Request) (*calendar.Event, *APIError) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		return nil, errBadRequest("Could not read the request body.")
	}
	var ev calendar.Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, errBadRequest("Invalid JSON payload received.")
	}
	// Read-only fields a client cannot set.
	ev.Etag, ev.Updated, ev.Created, ev.HtmlLink, ev.Kind = "", "", "", "", ""
	if ev.ExtendedProperties != nil {
		clampProps(ev.ExtendedProperties.Private)
		clampProps(ev.ExtendedProperties.Shared)
	}
	return &ev, nil
}

// clampProps applies Google's limits: keys over 44 characters are silently
// dropped, values over 1024 characters silently truncated.
func clampProps(m map[string]string) {
	for k, v := range m {
		if len(k) > 44 {
			delete(m, k)
			continue
		}
		if len(v) > 1024 {
			m[k] = v[:1024]
		}
	}
}

func (s *Server) stamp(ev *calendar.Event, created bool) {
	s.etagSeq++
	now := s.now().UTC().Format("2006-01-02T15:04:05.000Z")
	ev.Etag = `"` + strconv.FormatInt(3000000000000000+s.etagSeq, 10) + `"`
	ev.Updated = now
	ev.Kind = "calendar#event"
	if created || ev.Created == "" {
		ev.Created = now
	}
	if ev.ICalUID == "" {
		ev.ICalUID = ev.Id + "@google.com"
	}
	ev.HtmlLink = "https://www.google.com/calendar/event?eid=" + ev.Id
}

// requestKey names a request by what it asks (operation, path, query and
// body), so that injected faults are drawn per request, not from one
// sequence that concurrent requests take in varying order: a seeded run
// meets the same faults however its requests interleave.
func requestKey(op string, r *http.Request) string {
	h := sha256.New()
	h.Write([]byte(op + " " + r.URL.Path + "?" + r.URL.RawQuery + "\x00"))
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(b))
		if err == nil {
			h.Write(b)
		}
	}
	return string(h.Sum(nil))
}

// drawLocked is a fault's draw in [0, 1) for the request key: the n-th
// draw of a kind for the same request is the same in every run of a seed.
func (s *Server) drawLocked(kind, key string) float64 {
	k := kind + "\x00" + key
	n := s.draws[k]
	s.draws[k] = n + 1
	h := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s\x00%d", s.seed, k, n)))
	return float64(binary.BigEndian.Uint64(h[:8])>>11) / (1 << 53)
}

func (s *Server) newID() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuv"
	b := make([]byte, 26)
	for i := range b {
		b[i] = alphabet[s.rng.IntN(len(alphabet))]
	}
	return string(b)
}

// validID: base32hex characters (a-v, 0-9), 5 to 1024 of them. It is
// written here again rather than borrowed from internal/mapping on purpose:
// the emulator checks calsyncd's ids as Google would, independently.
func validID(id string) bool {
	if len(id) < 5 || len(id) > 1024 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'v') {
			return false
		}
	}
	return true
}

func cloneEvent(ev *calendar.Event) *calendar.Event {
	b, _ := json.Marshal(ev)
	var out calendar.Event
	_ = json.Unmarshal(b, &out)
	return &out
}

func sortEvents(evs []*calendar.Event) {
	slices.SortFunc(evs, func(a, b *calendar.Event) int {
		as, _, _ := eventSpan(a)
		bs, _, _ := eventSpan(b)
		return cmp.Or(as.Compare(bs), cmp.Compare(a.Id, b.Id))
	})
}

// String summarises an event for test failure messages.
func String(ev *calendar.Event) string {
	start, end := "", ""
	if ev.Start != nil {
		start = ev.Start.Date + ev.Start.DateTime
	}
	if ev.End != nil {
		end = ev.End.Date + ev.End.DateTime
	}
	return fmt.Sprintf("%s %q %s..%s [%s]", ev.Id, ev.Summary, start, end, ev.Status)
}
