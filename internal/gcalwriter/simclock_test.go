package gcalwriter_test

import (
	"bytes"
	"container/heap"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// simClock is virtual time for benchmarks, which cannot use
// testing/synctest (synctest.Test needs a *testing.T). Like a synctest
// bubble, it moves time forward only when every goroutine is blocked: then
// it jumps to the earliest pending timer and fires it. "Every goroutine is
// blocked" is read from the runtime's goroutine states (a world-stopping
// snapshot), so a benchmark measures the real writer and the real Google
// client on virtual time: no timer latency, no real sleeping, and ratios
// that do not depend on how loaded the machine is.
//
// The writer gets it as its gcalwriter.Clock and gcalfake gets its Now and
// Sleep; nothing else in a benchmark may wait on real time.
type simClock struct {
	mu     sync.Mutex
	now    time.Time
	timers timerHeap
	seq    uint64
	done   chan struct{}
	exited chan struct{}
}

var _ gcalwriter.Clock = (*simClock)(nil)

func newSimClock(start time.Time) *simClock {
	c := &simClock{now: start, done: make(chan struct{}), exited: make(chan struct{})}
	go c.advance()
	return c
}

// Close stops the clock's goroutine.
func (c *simClock) Close() {
	close(c.done)
	<-c.exited
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *simClock) AfterFunc(d time.Duration, f func()) gcalwriter.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &simTimer{c: c, when: c.now.Add(max(d, 0)), seq: c.seq, f: f}
	heap.Push(&c.timers, t)
	return t
}

// Sleep blocks for d of virtual time.
func (c *simClock) Sleep(d time.Duration) {
	done := make(chan struct{})
	c.AfterFunc(d, func() { close(done) })
	<-done
}

type simTimer struct {
	c     *simClock
	when  time.Time
	seq   uint64
	f     func()
	index int // in the heap; -1 once fired or stopped
}

func (t *simTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&t.c.timers, t.index)
	return true
}

type timerHeap []*simTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].when.Equal(h[j].when) {
		return h[i].when.Before(h[j].when)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*simTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.index = -1
	*h = old[:len(old)-1]
	return t
}

// advance fires the earliest timer whenever every other goroutine is
// blocked.
func (c *simClock) advance() {
	defer close(c.exited)
	self := goroutineID()
	buf := make([]byte, 1<<20)
	spins := 0
	for {
		select {
		case <-c.done:
			return
		default:
		}
		c.mu.Lock()
		pending := len(c.timers) > 0
		c.mu.Unlock()
		if !pending || !othersBlocked(self, &buf) {
			// Let the others run; back off to a real pause when they are
			// busy for long (a request being encoded, a benchmark between
			// runs).
			if spins++; spins < 50 {
				runtime.Gosched()
			} else {
				time.Sleep(20 * time.Microsecond)
			}
			continue
		}
		spins = 0
		c.mu.Lock()
		t := heap.Pop(&c.timers).(*simTimer)
		if t.when.After(c.now) {
			c.now = t.when
		}
		c.mu.Unlock()
		go t.f()
	}
}

// othersBlocked reports whether every goroutine but self is blocked (on a
// channel, a lock, a sleep, I/O), from a consistent snapshot of all
// goroutines.
func othersBlocked(self uint64, buf *[]byte) bool {
	for {
		n := runtime.Stack(*buf, true)
		if n < len(*buf) {
			return allBlocked((*buf)[:n], self)
		}
		*buf = make([]byte, 2*len(*buf))
	}
}

func allBlocked(dump []byte, self uint64) bool {
	for _, rec := range bytes.Split(dump, []byte("\n\n")) {
		// "goroutine 18 [chan receive, 2 minutes]:"
		head, _, _ := bytes.Cut(rec, []byte("\n"))
		rest, ok := bytes.CutPrefix(head, []byte("goroutine "))
		if !ok {
			continue
		}
		idText, state, _ := bytes.Cut(rest, []byte(" ["))
		if id, _ := strconv.ParseUint(string(idText), 10, 64); id == self {
			continue
		}
		state, _, _ = bytes.Cut(state, []byte("]"))
		state, _, _ = bytes.Cut(state, []byte(","))
		switch string(state) {
		case "running", "runnable", "syscall", "preempted", "copystack", "GC assist wait", "GC assist marking":
			return false
		}
	}
	return true
}

func goroutineID() uint64 {
	var b [64]byte
	s := b[:runtime.Stack(b[:], false)]
	s, _ = bytes.CutPrefix(s, []byte("goroutine "))
	s, _, _ = bytes.Cut(s, []byte(" "))
	id, _ := strconv.ParseUint(string(s), 10, 64)
	return id
}
