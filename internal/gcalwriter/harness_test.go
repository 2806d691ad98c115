package gcalwriter_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

const (
	cal = "team@example.com"
	sub = "team"
)

// memPersister records what the writer persisted.
type memPersister struct {
	mu       sync.Mutex
	saved    map[calsyncd.Key]calsyncd.Mapping
	deleted  []calsyncd.Key
	rejected map[calsyncd.Key]calsyncd.Rejection
}

func newMem() *memPersister {
	return &memPersister{saved: map[calsyncd.Key]calsyncd.Mapping{}, rejected: map[calsyncd.Key]calsyncd.Rejection{}}
}

func (p *memPersister) Saved(_ context.Context, m calsyncd.Mapping) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.saved[m.Key] = m
	return nil
}

func (p *memPersister) Deleted(_ context.Context, k calsyncd.Key) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.saved, k)
	p.deleted = append(p.deleted, k)
	return nil
}

func (p *memPersister) Rejected(_ context.Context, r calsyncd.Rejection) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rejected[r.Key] = r
	return nil
}

func (p *memPersister) flush() error { return nil }

func (p *memPersister) mapping(k calsyncd.Key) calsyncd.Mapping {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.saved[k]
}

func (p *memPersister) mappings() []calsyncd.Mapping {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]calsyncd.Mapping, 0, len(p.saved))
	for _, m := range p.saved {
		out = append(out, m)
	}
	return out
}

func (p *memPersister) rejections() []calsyncd.Rejection {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]calsyncd.Rejection, 0, len(p.rejected))
	for _, r := range p.rejected {
		out = append(out, r)
	}
	return out
}

// request is one request as the transport saw it.
type request struct {
	at      time.Time
	method  string
	path    string
	ifMatch string
}

func (r request) write() bool { return r.method != http.MethodGet }

// recorder notes every request on its way to the emulator.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	reqs []request
	// answer, when set, may replace an answer (a Google that misbehaves).
	answer func(*http.Request, *http.Response) *http.Response
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, request{at: time.Now(), method: req.Method, path: req.URL.Path, ifMatch: req.Header.Get("If-Match")})
	answer := r.answer
	r.mu.Unlock()
	resp, err := r.next.RoundTrip(req)
	if err == nil && answer != nil {
		resp = answer(req, resp)
	}
	return resp, err
}

func (r *recorder) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

func (r *recorder) writes() []request {
	var out []request
	for _, q := range r.requests() {
		if q.write() {
			out = append(out, q)
		}
	}
	return out
}

// syncBuffer collects log output from several goroutines.
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

type harness struct {
	t    *testing.T
	fake *gcalfake.Server
	logs *syncBuffer
	recs map[string]*recorder // by user
}

// newHarness builds an emulator with the team calendar. Inside a synctest
// bubble everything it makes runs on virtual time.
func newHarness(t *testing.T, opts gcalfake.Options) *harness {
	t.Helper()
	if opts.Seed == 0 {
		opts.Seed = 3
	}
	fake := gcalfake.New(opts)
	fake.AddCalendar(cal, "UTC")
	return &harness{t: t, fake: fake, logs: &syncBuffer{}, recs: map[string]*recorder{}}
}

// writer returns a writer acting as user, over the in-memory transport.
func (h *harness) writer(user string, o gcalwriter.Options) *gcalwriter.Writer {
	h.t.Helper()
	rec := &recorder{next: h.fake.Transport(user)}
	h.recs[user] = rec
	svc, err := calendar.NewService(context.Background(), option.WithEndpoint(gcalfake.Endpoint),
		option.WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		h.t.Fatal(err)
	}
	o.Logger = slog.New(slog.NewTextHandler(h.logs, nil)).With("account", user)
	o.Account = user
	if o.Seed == 0 {
		o.Seed = 1
	}
	return gcalwriter.New(svc, o)
}

// apply runs one batch and checks that every op landed in exactly one
// outcome.
func apply(t *testing.T, w *gcalwriter.Writer, p calsyncd.Persister, ops ...diff.Op) calsyncd.WriteResult {
	t.Helper()
	res := w.Apply(context.Background(), diff.Batch{SubscriptionID: sub, CalendarID: cal, Ops: ops}, p)
	checkAccounted(t, res, len(ops))
	return res
}

func checkAccounted(t testing.TB, res calsyncd.WriteResult, ops int) {
	t.Helper()
	if n := res.Created + res.Updated + res.Deleted + res.Forgotten + res.Deferred + res.Failed + res.Rejected + res.Unparented + res.Skipped; n != ops {
		t.Errorf("outcomes add up to %d for %d ops: %+v", n, ops, res)
	}
}

func event(uid, summary string) *feed.Event {
	ev := &feed.Event{UID: uid, Summary: summary, Status: feed.StatusConfirmed,
		Start: feed.Time{T: time.Date(2027, 1, 11, 9, 0, 0, 0, time.UTC)},
		End:   feed.Time{T: time.Date(2027, 1, 11, 10, 0, 0, 0, time.UTC)}}
	ev.Hash = ev.ComputeHash()
	return ev
}

// events makes n distinct feed events.
func events(n int) []feed.Event {
	out := make([]feed.Event, n)
	for i := range out {
		ev := event(fmt.Sprintf("evt-%04d@example.com", i), fmt.Sprintf("Event %d", i))
		ev.Start.T = ev.Start.T.Add(time.Duration(i) * time.Hour)
		ev.End.T = ev.End.T.Add(time.Duration(i) * time.Hour)
		ev.Hash = ev.ComputeHash()
		out[i] = *ev
	}
	return out
}

func create(ev *feed.Event) diff.Op { return diff.Op{Kind: diff.Create, Key: ev.Key(), Event: ev} }

func creates(evs []feed.Event) []diff.Op {
	ops := make([]diff.Op, len(evs))
	for i := range evs {
		ops[i] = create(&evs[i])
	}
	return ops
}

func update(ev *feed.Event, m calsyncd.Mapping) diff.Op {
	return diff.Op{Kind: diff.Update, Key: ev.Key(), Event: ev, Mapping: &m}
}

func del(m calsyncd.Mapping) diff.Op { return diff.Op{Kind: diff.Delete, Key: m.Key, Mapping: &m} }
