package gcalwriter_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// The owned listing tells drift: Google's copy shows the feed's event
// until a person edits a field we write; their colour and reminders alone
// are no drift.
func TestListOwnedTellsContentDrift(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		ev := event("a@example.com", "Standup")
		p := newMem()
		apply(t, w, p, create(ev))
		id := p.mapping(ev.Key()).EventID
		shows := func() bool {
			t.Helper()
			owned, err := w.ListOwned(context.Background(), cal, sub)
			if err != nil || len(owned) != 1 || owned[0].Content == nil {
				t.Fatalf("ListOwned = %+v, %v", owned, err)
			}
			return owned[0].Content.Shows(ev)
		}
		if !shows() {
			t.Fatal("our own write shows as drift")
		}
		h.fake.Edit(cal, id, func(e *calendar.Event) {
			e.ColorId = "11"
			e.Reminders = &calendar.EventReminders{Overrides: []*calendar.EventReminder{{Method: "popup", Minutes: 5}}}
		})
		if !shows() {
			t.Error("a person's colour and reminders show as drift")
		}
		h.fake.Edit(cal, id, func(e *calendar.Event) { e.Location = "Room 9" })
		if shows() {
			t.Error("a location typed into Google is not drift")
		}
	})
}

// afterRead runs edit once, right after Google answered the first read of
// an event: a person's edit that lands between our read and our write.
type afterRead struct {
	next http.RoundTripper
	once sync.Once
	edit func()
}

func (a *afterRead) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.next.RoundTrip(r)
	if err == nil && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/events/") {
		a.once.Do(a.edit)
	}
	return resp, err
}

// A repair goes with If-Match: a person who edits the event between our
// read (after the 412) and our write is not clobbered silently: Google
// answers 412 again, the writer reads again and keeps what the person set
// (their colour, given while we wrote), and the content is the feed's.
func TestARepairDoesNotClobberAConcurrentEdit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		ev := event("a@example.com", "Standup")
		p := newMem()
		apply(t, w, p, create(ev))
		m := p.mapping(ev.Key())
		h.fake.Edit(cal, m.EventID, func(e *calendar.Event) { e.Summary = "Renamed by hand" })

		hook := &afterRead{next: h.fake.Transport("alice"), edit: func() {
			h.fake.Edit(cal, m.EventID, func(e *calendar.Event) { e.ColorId = "7" })
		}}
		rec := &recorder{next: hook}
		svc, err := calendar.NewService(context.Background(), option.WithEndpoint(gcalfake.Endpoint), option.WithHTTPClient(&http.Client{Transport: rec}))
		if err != nil {
			t.Fatal(err)
		}
		w2 := gcalwriter.New(svc, gcalwriter.Options{Account: "alice", Seed: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		repair := m
		repair.Hash = "" // reconcile found the drift
		res := w2.Apply(context.Background(), diff.Batch{SubscriptionID: sub, CalendarID: cal, Ops: []diff.Op{update(ev, repair)}}, p)
		if res.Updated != 1 || res.Err != nil {
			t.Fatalf("result %+v", res)
		}
		got := h.fake.Events(cal)[0]
		if got.Summary != "Standup" || got.ColorId != "7" {
			t.Errorf("after the repair: %q colour %q, want the feed's title and the colour set meanwhile", got.Summary, got.ColorId)
		}
		var puts []request
		for _, r := range rec.requests() {
			if r.method == http.MethodPut {
				puts = append(puts, r)
			}
		}
		if len(puts) != 3 || res.ByClass[calsyncd.ClassPrecondition] != 2 {
			t.Fatalf("updates %+v, preconditions %v: want 3 updates, the first two refused (412)", puts, res.ByClass)
		}
		for _, put := range puts {
			if put.ifMatch == "" {
				t.Errorf("an update without If-Match: %+v", put)
			}
		}
		if puts[0].ifMatch != m.ETag {
			t.Errorf("the first update sent If-Match %s, want the etag we last wrote %s", puts[0].ifMatch, m.ETag)
		}
	})
}
