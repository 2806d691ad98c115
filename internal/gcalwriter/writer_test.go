package gcalwriter_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/mapping"
)

func TestCreateUpdateDelete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		p := newMem()
		ev := event("a@example.com", "Standup")
		if res := apply(t, w, p, create(ev)); res.Created != 1 || res.Err != nil {
			t.Fatalf("create: %+v", res)
		}
		m := p.mapping(ev.Key())
		if m.EventID != mapping.EventID("", sub, ev.Key(), 0) || m.ETag == "" || m.Hash != ev.Hash {
			t.Fatalf("mapping %+v", m)
		}
		changed := event("a@example.com", "Standup (new room)")
		if res := apply(t, w, p, update(changed, m)); res.Updated != 1 {
			t.Fatalf("update: %+v", res)
		}
		// Updates are full updates (PUT, one quota unit) carrying the etag
		// we last wrote.
		var put request
		for _, q := range h.recs["alice"].writes() {
			if q.method == http.MethodPut {
				put = q
			}
		}
		if put.ifMatch != m.ETag {
			t.Errorf("update sent If-Match %q, want the etag we wrote %q", put.ifMatch, m.ETag)
		}
		if st := h.fake.Stats(); st.ByOp["patch"] != 0 {
			t.Errorf("%d patches: they cost three quota units", st.ByOp["patch"])
		}
		m2 := p.mapping(ev.Key())
		if got := h.fake.Events(cal)[0]; got.Summary != "Standup (new room)" || m2.ETag != got.Etag {
			t.Fatalf("after update: %s, mapping etag %s", gcalfake.String(got), m2.ETag)
		}
		if res := apply(t, w, p, del(m2)); res.Deleted != 1 || len(p.deleted) != 1 {
			t.Fatalf("delete: %+v", res)
		}
		if n := len(h.fake.Events(cal)); n != 0 {
			t.Fatalf("%d live events after delete", n)
		}
		if !strings.Contains(h.logs.String(), "batch written") {
			t.Errorf("no batch log line:\n%s", h.logs)
		}
	})
}

func TestPurgedIDMovesToNextGeneration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		ev := event("a@example.com", "Standup")
		p := newMem()
		apply(t, w, p, create(ev))
		first := p.mapping(ev.Key())
		// A person deletes it and empties the bin; the feed still has it, and
		// the database was lost, so we create it again.
		h.fake.Delete(cal, first.EventID)
		h.fake.EmptyBin(cal)
		p2 := newMem()
		res := apply(t, w, p2, create(ev))
		m := p2.mapping(ev.Key())
		if res.Created != 1 || m.Generation != 1 || m.EventID == first.EventID || m.EventID != mapping.EventID("", sub, ev.Key(), 1) {
			t.Fatalf("result %+v mapping %+v (first %s)", res, m, first.EventID)
		}
		if n := len(h.fake.Events(cal)); n != 1 {
			t.Fatalf("live events = %d, want 1", n)
		}
	})
}

func TestUpdateOfAPurgedEventMovesToNextGeneration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		ev := event("a@example.com", "Standup")
		p := newMem()
		apply(t, w, p, create(ev))
		m := p.mapping(ev.Key())
		h.fake.Delete(cal, m.EventID)
		h.fake.EmptyBin(cal)
		// Google answers 403 to the update: not an auth failure, a burnt id.
		changed := event("a@example.com", "Standup (moved)")
		res := apply(t, w, p, update(changed, m))
		got := p.mapping(ev.Key())
		if res.Err != nil || res.Created != 1 || got.Generation != 1 {
			t.Fatalf("result %+v mapping %+v", res, got)
		}
		if evs := h.fake.Events(cal); len(evs) != 1 || evs[0].Summary != "Standup (moved)" {
			t.Fatalf("calendar: %v", evs)
		}
	})
}

func TestCancelledEventIsRestoredNotDuplicated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		ev := event("a@example.com", "Standup")
		p := newMem()
		apply(t, w, p, create(ev))
		h.fake.Delete(cal, p.mapping(ev.Key()).EventID)
		res := apply(t, w, newMem(), create(ev))
		if res.Restored != 1 || res.Created != 1 || len(h.fake.Events(cal)) != 1 || len(h.fake.AllEvents(cal)) != 1 {
			t.Fatalf("result %+v, live %d, all %d", res, len(h.fake.Events(cal)), len(h.fake.AllEvents(cal)))
		}
	})
}

// A 409 on insert means the event exists (a lost database): identical, it is
// adopted without a write; different, it is rewritten.
func TestConflictAdoptsComparingContent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		same, stale := event("same@example.com", "Same"), event("stale@example.com", "Stale")
		apply(t, w, newMem(), create(same), create(stale))
		// A person retitles one in the UI; our content stamp stays as it was.
		staleID := mapping.EventID("", sub, stale.Key(), 0)
		h.fake.Edit(cal, staleID, func(e *calendar.Event) { e.Summary = "Renamed by hand" })
		before := h.fake.Stats().ByOp["update"]
		p := newMem()
		res := apply(t, w, p, create(same), create(stale))
		if res.Adopted != 2 || res.Created != 2 || res.Err != nil {
			t.Fatalf("result %+v", res)
		}
		if n := h.fake.Stats().ByOp["update"] - before; n != 1 {
			t.Errorf("%d updates, want 1 (only the event that differs)", n)
		}
		for _, ev := range h.fake.Events(cal) {
			if ev.Summary == "Renamed by hand" {
				t.Errorf("the different event was adopted as it was")
			}
		}
		if p.mapping(stale.Key()).ETag != h.fake.Events(cal)[0].Etag && p.mapping(stale.Key()).ETag != h.fake.Events(cal)[1].Etag {
			t.Errorf("adopted mapping does not hold the etag of what we wrote")
		}
	})
}

// An event with our id that does not carry our marks is not ours: we never
// write over it.
func TestConflictWithAnEventNotOursMovesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		ev := event("a@example.com", "Standup")
		id := mapping.EventID("", sub, ev.Key(), 0)
		h.fake.Seed(cal, &calendar.Event{Id: id, Summary: "Someone's own",
			Start: &calendar.EventDateTime{Date: "2027-01-01"}, End: &calendar.EventDateTime{Date: "2027-01-02"}})
		p := newMem()
		res := apply(t, w, p, create(ev))
		if res.Created != 1 || p.mapping(ev.Key()).Generation != 1 {
			t.Fatalf("result %+v mapping %+v", res, p.mapping(ev.Key()))
		}
		var theirs int
		for _, e := range h.fake.Events(cal) {
			if e.Summary == "Someone's own" {
				theirs++
			}
		}
		if theirs != 1 {
			t.Errorf("their event was overwritten")
		}
	})
}

func TestUpdateKeepsAPersonsReminderAndColour(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		ev := event("a@example.com", "Standup")
		p := newMem()
		apply(t, w, p, create(ev))
		m := p.mapping(ev.Key())
		h.fake.Edit(cal, m.EventID, func(e *calendar.Event) {
			e.ColorId = "11"
			e.Reminders = &calendar.EventReminders{Overrides: []*calendar.EventReminder{{Method: "popup", Minutes: 5}}}
		})
		changed := event("a@example.com", "Standup (new room)")
		res := apply(t, w, p, update(changed, m))
		got := h.fake.Events(cal)[0]
		if res.Updated != 1 || got.Summary != "Standup (new room)" || got.ColorId != "11" || got.Reminders == nil || len(got.Reminders.Overrides) != 1 {
			t.Fatalf("result %+v event %+v", res, got)
		}
		if p.mapping(ev.Key()).ETag != got.Etag {
			t.Errorf("persisted etag %s, event etag %s", p.mapping(ev.Key()).ETag, got.Etag)
		}
		if res.ByClass[calsyncd.ClassPrecondition] != 1 {
			t.Errorf("ByClass %v, want one precondition failure", res.ByClass)
		}
	})
}

func TestUpdateOfAVanishedEventRecreatesIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		ev := event("a@example.com", "Standup")
		m := calsyncd.Mapping{Key: ev.Key(), EventID: mapping.EventID("", sub, ev.Key(), 0), Hash: "old"}
		res := apply(t, w, newMem(), update(ev, m))
		if res.Created != 1 || len(h.fake.Events(cal)) != 1 {
			t.Fatalf("result %+v", res)
		}
	})
}

func TestDeleteOfAnAlreadyDeletedEventIsDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		ev := event("a@example.com", "Standup")
		p := newMem()
		apply(t, w, p, create(ev))
		m := p.mapping(ev.Key())
		h.fake.Delete(cal, m.EventID)
		res := apply(t, w, p, del(m))
		if res.Deleted != 1 || len(p.deleted) != 1 || res.Failed != 0 {
			t.Fatalf("result %+v", res)
		}
	})
}

func TestInvalidEventIsRejectedAndTheRestGoOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		bad := event("bad@example.com", "Bad")
		bad.Recurrence = []string{"RRULE:NOPE"}
		bad.Hash = bad.ComputeHash()
		good := event("good@example.com", "Good")
		p := newMem()
		res := apply(t, w, p, create(bad), create(good))
		rj := p.rejections()
		if res.Rejected != 1 || res.Created != 1 || len(rj) != 1 || rj[0].Hash != bad.Hash || len(h.fake.Events(cal)) != 1 {
			t.Fatalf("result %+v rejected %+v", res, rj)
		}
		if !strings.Contains(rj[0].Reason, "HTTP 400") {
			t.Errorf("rejection reason %q lacks Google's answer", rj[0].Reason)
		}
		if res.Err != nil {
			t.Fatalf("a rejected event stopped the batch: %v", res.Err)
		}
	})
}

func TestMissingCalendarStopsTheBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		res := w.Apply(context.Background(), diff.Batch{SubscriptionID: sub, CalendarID: "nope@example.com",
			Ops: []diff.Op{create(event("a", "A"))}}, newMem())
		var werr *gcalwriter.Error
		if res.Err == nil || !errors.As(res.Err, &werr) || werr.Class != calsyncd.ClassAuth || !errors.Is(res.Err, gcalwriter.ErrCalendarNotFound) || res.Skipped != 1 {
			t.Fatalf("result %+v", res)
		}
	})
}

// A 401 is an auth failure, tried once more (the token source may have a
// new token), never retried as a rate limit, and it stops the batch.
func TestUnauthorizedStopsTheBatchAfterOneMoreTry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		p := newMem()
		apply(t, w, p, create(event("warmup", "x")))
		h.fake.SetFaults(gcalfake.Faults{Unauthorized: true})
		before := len(h.recs["alice"].requests())
		res := apply(t, w, p, creates(events(5))...)
		var werr *gcalwriter.Error
		if !errors.As(res.Err, &werr) || werr.Class != calsyncd.ClassAuth || werr.Code != 401 {
			t.Fatalf("Err = %v, want an auth error", res.Err)
		}
		if res.Deferred != 0 || res.Skipped != 5 {
			t.Errorf("result %+v, want all 5 skipped", res)
		}
		// calendars.get, and once more.
		if n := len(h.recs["alice"].requests()) - before; n != 2 {
			t.Errorf("%d requests after the 401s, want 2", n)
		}
		if st := w.State(); !st.ThrottleUntil.IsZero() {
			t.Errorf("an auth failure opened a throttle window: %+v", st)
		}
	})
}

func TestShutdownSkipsWhatIsLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(2*time.Second, cancel)
		ops := creates(events(30))
		res := w.Apply(ctx, diff.Batch{SubscriptionID: sub, CalendarID: cal, Ops: ops}, newMem())
		checkAccounted(t, res, len(ops))
		if res.Skipped == 0 || res.Created == 0 || res.Err != nil || res.Deferred != 0 {
			t.Fatalf("result %+v", res)
		}
		if n := len(h.fake.Events(cal)); n != res.Created {
			t.Errorf("%d events in Google, %d reported created", n, res.Created)
		}
	})
}

func TestBackfillIsMarked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{BackfillThreshold: 3})
		p := newMem()
		evs := events(6)
		if res := apply(t, w, p, creates(evs[:3])...); res.Backfill {
			t.Errorf("3 ops at threshold 3 ran as backfill")
		}
		if res := apply(t, w, p, creates(evs[3:])[:1]...); res.Backfill {
			t.Errorf("1 op ran as backfill")
		}
		res := w.Apply(context.Background(), diff.Batch{SubscriptionID: sub, CalendarID: cal, Ops: creates(evs[4:]), Backfill: true}, p)
		if !res.Backfill || res.Created != 2 {
			t.Errorf("first sync: %+v", res)
		}
		if res := apply(t, w, newMem(), creates(events(10))...); !res.Backfill {
			t.Errorf("10 ops at threshold 3 did not run as backfill")
		}
	})
}

func TestDrainFinishesInFlightWritesAndSkipsTheRest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{Latency: 400 * time.Millisecond})
		w := h.writer("alice", gcalwriter.Options{})
		drain := make(chan struct{})
		time.AfterFunc(2*time.Second, func() { close(drain) })
		p := newMem()
		ops := creates(events(30))
		res := w.Apply(context.Background(), diff.Batch{SubscriptionID: sub, CalendarID: cal, Ops: ops, Drain: drain}, p)
		checkAccounted(t, res, len(ops))
		if res.Created == 0 || res.Skipped == 0 || res.Deferred != 0 || res.Err != nil {
			t.Fatalf("result %+v", res)
		}
		// Every write Google accepted was persisted, including those in flight
		// when the drain began.
		if n := len(h.fake.Events(cal)); n != res.Created || len(p.mappings()) != n {
			t.Errorf("%d events in Google, %d created, %d persisted", n, res.Created, len(p.mappings()))
		}
		closed := make(chan struct{})
		close(closed)
		res = w.Apply(context.Background(), diff.Batch{SubscriptionID: sub, CalendarID: cal, Ops: ops, Drain: closed}, p)
		if res.Skipped != len(ops) {
			t.Errorf("a batch drained before it began: %+v", res)
		}
	})
}

// ListOwned lists only the subscription's events, whether Google ANDs or
// ORs repeated property filters and whether its filters let other items
// through: every item is checked for our marks.
func TestListOwned(t *testing.T) {
	for _, props := range []gcalfake.PropertyRepeats{gcalfake.PropertiesAnd, gcalfake.PropertiesOr} {
		for _, filters := range []gcalfake.Filters{gcalfake.FiltersExact, gcalfake.FiltersLoose} {
			r := gcalfake.Readings{PropertyRepeats: props, Filters: filters}
			t.Run(r.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					h := newHarness(t, gcalfake.Options{Readings: r})
					w := h.writer("alice", gcalwriter.Options{})
					p := newMem()
					evs := events(3)
					apply(t, w, p, creates(evs)...)
					h.fake.Delete(cal, p.mapping(evs[0].Key()).EventID)
					for i := range 6 {
						day := fmt.Sprintf("2027-01-%02d", i+1)
						h.fake.Seed(cal, &calendar.Event{Summary: "a person's own",
							Start: &calendar.EventDateTime{Date: day}, End: &calendar.EventDateTime{Date: day}})
						other := gcalwriter.ToGoogle("", "other", &evs[i%3])
						other.Id = fmt.Sprintf("other%d", i)
						h.fake.Seed(cal, other)
					}
					owned, err := w.ListOwned(context.Background(), cal, sub)
					if err != nil {
						t.Fatal(err)
					}
					if len(owned) != 3 {
						t.Fatalf("%d owned events, want 3: %+v", len(owned), owned)
					}
					for _, o := range owned {
						m := p.mapping(o.Key)
						if o.EventID != m.EventID || o.Hash != m.Hash || o.Cancelled != (o.Key == evs[0].Key()) {
							t.Errorf("owned %+v, mapping %+v", o, m)
						}
					}
				})
			})
		}
	}
}

// TestResultReportsWhatWasRecorded: the result lists exactly what the
// batch recorded through the Persister (saved mappings, deleted keys,
// rejections), so a caller keeps its view of the store without reading it.
func TestResultReportsWhatWasRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		p := newMem()
		evs := events(4)
		first := apply(t, w, p, creates(evs)...)
		if len(first.Mapped) != 4 || len(first.Unmapped) != 0 {
			t.Fatalf("first batch reports %d saved, %d deleted", len(first.Mapped), len(first.Unmapped))
		}
		for _, m := range first.Mapped {
			if p.mapping(m.Key) != m {
				t.Errorf("reported %+v, persisted %+v", m, p.mapping(m.Key))
			}
		}
		changed := event(evs[0].UID, "Renamed")
		bad := event("bad@example.com", "Rejected")
		bad.Recurrence = []string{"RRULE:NOPE"}
		bad.Hash = bad.ComputeHash()
		second := apply(t, w, p, create(bad), update(changed, p.mapping(evs[0].Key())), del(p.mapping(evs[1].Key())))
		if len(second.Mapped) != 1 || second.Mapped[0] != p.mapping(evs[0].Key()) {
			t.Errorf("second batch reports saved %+v", second.Mapped)
		}
		if len(second.Unmapped) != 1 || second.Unmapped[0] != evs[1].Key() {
			t.Errorf("second batch reports deleted %v", second.Unmapped)
		}
		if len(second.Rejections) != 1 || second.Rejections[0].Key != bad.Key() || p.rejected[bad.Key()] != second.Rejections[0] {
			t.Errorf("second batch reports rejections %+v (persisted %+v)", second.Rejections, p.rejected)
		}
	})
}
