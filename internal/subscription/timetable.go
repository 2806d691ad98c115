package subscription

import (
	"container/heap"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// timetable is when every scheduled subscription runs next, in one
// min-heap keyed by that time: a run costs O(log N) and a subscription's
// next run is one map lookup, whatever the number of subscriptions.
// robfig/cron still reads the schedules (cron.Schedule); its scheduler
// re-sorts every entry on every wake-up and copies them all to answer for
// one, which at 10,000 subscriptions was a third of the daemon's CPU and
// made `GET /status` take half a minute.
//
// Like robfig/cron's scheduler it runs each due job in a goroutine of its
// own, computes the next run from the time it woke, and never runs an
// entry whose schedule answers the zero time ("never").
type timetable struct {
	run func(id string)

	mu      sync.Mutex
	due     slotHeap
	byID    map[string]*slot
	started bool
	wake    chan struct{} // the earliest run may have changed
	quit    chan struct{}
	done    chan struct{}
}

// slot is one subscription's place in the timetable.
type slot struct {
	id       string
	schedule cron.Schedule
	next     time.Time // zero: never
	index    int       // in the heap; -1 when not in it
}

func newTimetable(run func(id string)) *timetable {
	return &timetable{run: run, byID: map[string]*slot{}, wake: make(chan struct{}, 1),
		quit: make(chan struct{}), done: make(chan struct{})}
}

// now is the scheduler's clock, in the local zone as robfig/cron's is
// with cron.WithLocation(time.Local).
func (t *timetable) now() time.Time { return time.Now().In(time.Local) }

// add schedules id (replacing an earlier schedule of the same id); its
// first run is the schedule's next time after now.
func (t *timetable) add(id string, s cron.Schedule) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.removeLocked(id)
	sl := &slot{id: id, schedule: s, next: s.Next(t.now()), index: -1}
	t.byID[id] = sl
	if !sl.next.IsZero() {
		heap.Push(&t.due, sl)
	}
	t.poke()
}

// remove unschedules id; a run already started goes on.
func (t *timetable) remove(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.removeLocked(id)
	t.poke()
}

func (t *timetable) removeLocked(id string) {
	sl, ok := t.byID[id]
	if !ok {
		return
	}
	delete(t.byID, id)
	if sl.index >= 0 {
		heap.Remove(&t.due, sl.index)
	}
}

// next is when id runs next: zero when it is not scheduled or never runs.
func (t *timetable) next(id string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if sl, ok := t.byID[id]; ok {
		return sl.next
	}
	return time.Time{}
}

// poke wakes the loop to look at the earliest run again (t.mu held).
func (t *timetable) poke() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// start runs the timetable until stop.
func (t *timetable) start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started {
		return
	}
	t.started = true
	go t.loop()
}

// stop ends the loop: no job starts after it returns (the ones started
// go on).
func (t *timetable) stop() {
	t.mu.Lock()
	started := t.started
	t.mu.Unlock()
	if !started {
		return
	}
	select {
	case <-t.quit:
	default:
		close(t.quit)
	}
	<-t.done
}

func (t *timetable) loop() {
	defer close(t.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		ids, wait, any := t.takeDue(t.now())
		for _, id := range ids {
			go t.run(id)
		}
		var fire <-chan time.Time
		if any {
			timer.Reset(wait)
			fire = timer.C
		}
		select {
		case <-fire:
		case <-t.wake:
		case <-t.quit:
			timer.Stop()
			return
		}
		timer.Stop()
	}
}

// takeDue pops every run due at now, puts each back at its schedule's
// next time after now, and says how long until the earliest run left (any
// is false when nothing is scheduled).
func (t *timetable) takeDue(now time.Time) (ids []string, wait time.Duration, any bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.quit:
		return nil, 0, false
	default:
	}
	for len(t.due) > 0 && !t.due[0].next.After(now) {
		sl := t.due[0]
		ids = append(ids, sl.id)
		sl.next = sl.schedule.Next(now)
		if sl.next.IsZero() {
			heap.Pop(&t.due)
		} else {
			heap.Fix(&t.due, 0)
		}
	}
	if len(t.due) == 0 {
		return ids, 0, false
	}
	return ids, t.due[0].next.Sub(now), true
}

// slotHeap orders slots by their next run (container/heap).
type slotHeap []*slot

func (h slotHeap) Len() int { return len(h) }
func (h slotHeap) Less(i, j int) bool {
	if !h[i].next.Equal(h[j].next) {
		return h[i].next.Before(h[j].next)
	}
	return h[i].id < h[j].id
}
func (h slotHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *slotHeap) Push(x any) {
	sl := x.(*slot)
	sl.index = len(*h)
	*h = append(*h, sl)
}
func (h *slotHeap) Pop() any {
	old := *h
	sl := old[len(old)-1]
	old[len(old)-1] = nil
	sl.index = -1
	*h = old[:len(old)-1]
	return sl
}
