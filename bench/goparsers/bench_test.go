package goparsers

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed/feedgen"
)

// BenchmarkParsers parses every feedgen shape with calsyncd's whole read
// and with each peer's bare parse, one goroutine each, and reports per
// shape and parser:
//
//   - ns/event and events/s;
//   - allocs/event and B/event allocated;
//   - peak-heap/B: the highest heap in use while parsing (sampled every
//     100µs, the body itself not counted) over the file size.
//
// The last sub-benchmark of each shape, vs-fastest-peer, reports
// calsyncd's ns/event over the fastest peer's (below 1: calsyncd leads)
// and calsyncd's peak-heap/B. The machine is shared: compare within a
// run, and repeat:
//
//	cd bench/goparsers && go test -run '^$' -bench . -benchtime 3x -count 5
//
// Instruction counts come from instructions.sh (callgrind).
func BenchmarkParsers(b *testing.B) {
	for _, s := range feedgen.Shapes {
		for _, n := range s.Events {
			data := s.Generate(n)
			nsPerEvent := map[string]float64{}
			var peak float64
			for _, p := range Parsers {
				b.Run(fmt.Sprintf("%s/events=%d/%s", s.Name, n, p.Name), func(b *testing.B) {
					ns, heap := benchOne(b, p, data)
					nsPerEvent[p.Name] = ns
					if p.Name == "calsyncd" {
						peak = heap
					}
				})
			}
			b.Run(fmt.Sprintf("%s/events=%d/vs-fastest-peer", s.Name, n), func(b *testing.B) {
				for b.Loop() {
				}
				fastest := 0.0
				for name, ns := range nsPerEvent {
					if name != "calsyncd" && (fastest == 0 || ns < fastest) {
						fastest = ns
					}
				}
				if fastest > 0 && nsPerEvent["calsyncd"] > 0 {
					b.ReportMetric(nsPerEvent["calsyncd"]/fastest, "x-time-of-fastest-peer")
				}
				b.ReportMetric(peak, "calsyncd-peak-heap/B")
			})
		}
	}
}

// benchOne times p on data and returns its ns/event and peak-heap/B.
func benchOne(b *testing.B, p Parser, data []byte) (nsPerEvent, peakPerByte float64) {
	b.SetBytes(int64(len(data)))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	events := 0
	for b.Loop() {
		n, err := p.Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		events += n
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	nsPerEvent = float64(elapsed.Nanoseconds()) / float64(events)
	b.ReportMetric(nsPerEvent, "ns/event")
	b.ReportMetric(float64(events)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(events), "allocs/event")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(events), "B/event")
	peakPerByte = peakHeap(p, data) / float64(len(data))
	b.ReportMetric(peakPerByte, "peak-heap/B")
	return nsPerEvent, peakPerByte
}

// peakHeap parses data once more and returns the highest heap in use seen
// meanwhile, over the heap in use before.
func peakHeap(p Parser, data []byte) float64 {
	runtime.GC()
	base := heapInUse()
	var highest atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			if h := heapInUse(); h > highest.Load() {
				highest.Store(h)
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	})
	_, err := p.Parse(data)
	if h := heapInUse(); h > highest.Load() {
		highest.Store(h)
	}
	close(stop)
	wg.Wait()
	if err != nil {
		panic(err)
	}
	return float64(highest.Load()) - float64(base)
}

// heapInUse is the heap's spans in use, read without stopping the world.
func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}
