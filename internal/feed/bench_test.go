package feed_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/feed/feedgen"
)

// BenchmarkParse measures parse + normalise + hash on generated feeds of
// 10,000 and 100,000 events. Besides ns/op it reports events/s, allocations
// and bytes allocated per event, the heap the parsed calendar keeps per
// event, and the peak heap in use while parsing.
//
//	go test -run '^$' -bench BenchmarkParse -benchtime 5x ./internal/feed
func BenchmarkParse(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		data := feedgen.Generate(n)
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			var cal *feed.Calendar
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			loops := 0
			for b.Loop() {
				var err error
				cal, err = feed.ParseBytes(data, feed.Options{})
				if err != nil {
					b.Fatal(err)
				}
				loops++
			}
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			if len(cal.Events) != n {
				b.Fatalf("%d events, want %d", len(cal.Events), n)
			}
			events := float64(n * loops)
			b.ReportMetric(events/elapsed.Seconds(), "events/s")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/events, "allocs/event")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/events, "B/event")
			retained, peak := retainedAndPeak(data)
			b.ReportMetric(retained/float64(n), "retained-B/event")
			b.ReportMetric(peak/(1<<20), "peak-heap-MiB")
		})
	}
}

// retainedAndPeak parses data once more and measures the heap the result
// keeps after a GC, and the highest heap in use seen while parsing
// (sampled every millisecond).
func retainedAndPeak(data []byte) (retained, peak float64) {
	var base, kept runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	var highest atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				runtime.ReadMemStats(&m)
				if m.HeapInuse > highest.Load() {
					highest.Store(m.HeapInuse)
				}
			}
		}
	}()
	cal, err := feed.ParseBytes(data, feed.Options{})
	close(stop)
	wg.Wait()
	if err != nil {
		panic(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&kept)
	runtime.KeepAlive(cal)
	return float64(kept.HeapInuse) - float64(base.HeapInuse), float64(highest.Load()) - float64(base.HeapInuse)
}
