package gcalwriter_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/mapping"
)

const cal = "team@example.com"

// memPersister records what the writer persisted.
type memPersister struct {
	mu       sync.Mutex
	saved    map[mapping.Key]mapping.Mapping
	deleted  []mapping.Key
	rejected []mapping.Rejection
}

func newMem() *memPersister { return &memPersister{saved: map[mapping.Key]mapping.Mapping{}} }

func (p *memPersister) Saved(_ context.Context, m mapping.Mapping) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.saved[m.Key] = m
	return nil
}

func (p *memPersister) Deleted(_ context.Context, k mapping.Key) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.saved, k)
	p.deleted = append(p.deleted, k)
	return nil
}

func (p *memPersister) Rejected(_ context.Context, r mapping.Rejection) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rejected = append(p.rejected, r)
	return nil
}

func newWriter(t *testing.T) (*gcalfake.Server, *gcalwriter.Writer) {
	t.Helper()
	fake := gcalfake.New(gcalfake.Options{Seed: 3})
	fake.AddCalendar(cal, "UTC")
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	svc, err := calendar.NewService(context.Background(), option.WithEndpoint(srv.URL+gcalfake.BasePath), option.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return fake, gcalwriter.New(svc, gcalwriter.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

func event(uid, summary string) *feed.Event {
	ev := &feed.Event{UID: uid, Summary: summary, Status: feed.StatusConfirmed,
		Start: feed.Time{T: time.Date(2027, 1, 11, 9, 0, 0, 0, time.UTC)},
		End:   feed.Time{T: time.Date(2027, 1, 11, 10, 0, 0, 0, time.UTC)}}
	ev.Hash = ev.ComputeHash()
	return ev
}

func create(ev *feed.Event) diff.Op { return diff.Op{Kind: diff.Create, Key: ev.Key(), Event: ev} }

func TestPurgedIDMovesToNextGeneration(t *testing.T) {
	fake, w := newWriter(t)
	ev := event("a@example.com", "Standup")
	p := newMem()
	w.Apply(context.Background(), gcalwriter.Batch{SubscriptionID: "team", CalendarID: cal, Ops: []diff.Op{create(ev)}}, p)
	first := p.saved[ev.Key()]
	// A person deletes it and empties the bin; the feed still has it, and the
	// database was lost, so we create it again.
	fake.Delete(cal, first.EventID)
	fake.EmptyBin(cal)
	p2 := newMem()
	res := w.Apply(context.Background(), gcalwriter.Batch{SubscriptionID: "team", CalendarID: cal, Ops: []diff.Op{create(ev)}}, p2)
	m := p2.saved[ev.Key()]
	if res.Created != 1 || m.Generation != 1 || m.EventID == first.EventID || m.EventID != mapping.EventID("team", ev.Key(), 1) {
		t.Fatalf("result %+v mapping %+v (first %s)", res, m, first.EventID)
	}
	if n := len(fake.Events(cal)); n != 1 {
		t.Fatalf("live events = %d, want 1", n)
	}
}

func TestCancelledEventIsRestoredNotDuplicated(t *testing.T) {
	fake, w := newWriter(t)
	ev := event("a@example.com", "Standup")
	p := newMem()
	w.Apply(context.Background(), gcalwriter.Batch{SubscriptionID: "team", CalendarID: cal, Ops: []diff.Op{create(ev)}}, p)
	fake.Delete(cal, p.saved[ev.Key()].EventID)
	res := w.Apply(context.Background(), gcalwriter.Batch{SubscriptionID: "team", CalendarID: cal, Ops: []diff.Op{create(ev)}}, newMem())
	if res.Restored != 1 || res.Created != 1 || len(fake.Events(cal)) != 1 || len(fake.AllEvents(cal)) != 1 {
		t.Fatalf("result %+v, live %d, all %d", res, len(fake.Events(cal)), len(fake.AllEvents(cal)))
	}
}

func TestUpdateKeepsAPersonsReminderAndColour(t *testing.T) {
	fake, w := newWriter(t)
	ev := event("a@example.com", "Standup")
	p := newMem()
	w.Apply(context.Background(), gcalwriter.Batch{SubscriptionID: "team", CalendarID: cal, Ops: []diff.Op{create(ev)}}, p)
	m := p.saved[ev.Key()]
	fake.Edit(cal, m.EventID, func(e *calendar.Event) {
		e.ColorId = "11"
		e.Reminders = &calendar.EventReminders{Overrides: []*calendar.EventReminder{{Method: "popup", Minutes: 5}}}
	})
	changed := event("a@example.com", "Standup (new room)")
	res := w.Apply(context.Background(), gcalwriter.Batch{SubscriptionID: "team", CalendarID: cal,
		Ops: []diff.Op{{Kind: diff.Update, Key: changed.Key(), Event: changed, Mapping: &m}}}, p)
	got := fake.Events(cal)[0]
	if res.Updated != 1 || got.Summary != "Standup (new room)" || got.ColorId != "11" || got.Reminders == nil || len(got.Reminders.Overrides) != 1 {
		t.Fatalf("result %+v event %+v", res, got)
	}
	if p.saved[ev.Key()].ETag != got.Etag {
		t.Errorf("persisted etag %s, event etag %s", p.saved[ev.Key()].ETag, got.Etag)
	}
}

func TestUpdateOfAVanishedEventRecreatesIt(t *testing.T) {
	fake, w := newWriter(t)
	ev := event("a@example.com", "Standup")
	m := mapping.Mapping{Key: ev.Key(), EventID: mapping.EventID("team", ev.Key(), 0), Hash: "old"}
	res := w.Apply(context.Background(), gcalwriter.Batch{SubscriptionID: "team", CalendarID: cal,
		Ops: []diff.Op{{Kind: diff.Update, Key: ev.Key(), Event: ev, Mapping: &m}}}, newMem())
	if res.Created != 1 || len(fake.Events(cal)) != 1 {
		t.Fatalf("result %+v", res)
	}
}

func TestDeleteOfAnAlreadyDeletedEventIsDone(t *testing.T) {
	fake, w := newWriter(t)
	ev := event("a@example.com", "Standup")
	p := newMem()
	w.Apply(context.Background(), gcalwriter.Batch{SubscriptionID: "team", CalendarID: cal, Ops: []diff.Op{create(ev)}}, p)
	m := p.saved[ev.Key()]
	fake.Delete(cal, m.EventID)
	res := w.Apply(context.Background(), gcalwriter.Batch{SubscriptionID: "team", CalendarID: cal,
		Ops: []diff.Op{{Kind: diff.Delete, Key: ev.Key(), Mapping: &m}}}, p)
	if res.Deleted != 1 || len(p.deleted) != 1 || res.Failed != 0 {
		t.Fatalf("result %+v", res)
	}
}

func TestInvalidEventIsRejectedAndTheRestGoOn(t *testing.T) {
	fake, w := newWriter(t)
	bad := event("bad@example.com", "Bad")
	bad.Recurrence = []string{"RRULE:NOPE"}
	bad.Hash = bad.ComputeHash()
	good := event("good@example.com", "Good")
	p := newMem()
	res := w.Apply(context.Background(), gcalwriter.Batch{SubscriptionID: "team", CalendarID: cal, Ops: []diff.Op{create(bad), create(good)}}, p)
	if res.Rejected != 1 || res.Created != 1 || len(p.rejected) != 1 || p.rejected[0].Hash != bad.Hash || len(fake.Events(cal)) != 1 {
		t.Fatalf("result %+v rejected %+v", res, p.rejected)
	}
	if res.Err != nil {
		t.Fatalf("a rejected event stopped the batch: %v", res.Err)
	}
}

func TestMissingCalendarStopsTheBatch(t *testing.T) {
	_, w := newWriter(t)
	res := w.Apply(context.Background(), gcalwriter.Batch{SubscriptionID: "team", CalendarID: "nope@example.com",
		Ops: []diff.Op{create(event("a", "A"))}}, newMem())
	var werr *gcalwriter.Error
	if res.Err == nil || !errors.As(res.Err, &werr) || werr.Class != gcalwriter.ClassAuth || res.Skipped != 1 {
		t.Fatalf("result %+v", res)
	}
}
