package feed_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestMaxEventsStopsTheRead: a feed with more events than MaxEvents that
// are certain to be kept stops being read once it has one more: the parse
// fails with a *feed.LimitError (class feed_over_limit) having read a
// fraction of the body. Events that may not be kept (outside the window,
// repeated UIDs, series) are left to the limit checked after the parse.
func TestMaxEventsStopsTheRead(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	window := feed.Options{Now: now, WindowPast: 30 * 24 * time.Hour, WindowFuture: 365 * 24 * time.Hour}
	feedOf := func(n int, event func(i int) string) []byte {
		var b strings.Builder
		b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n")
		for i := range n {
			b.WriteString("BEGIN:VEVENT\r\n" + event(i) + "END:VEVENT\r\n")
		}
		b.WriteString("END:VCALENDAR\r\n")
		return []byte(b.String())
	}
	at := func(t time.Time) string { return t.Format("20060102T150405Z") }
	for _, tc := range []struct {
		name   string
		opts   feed.Options
		data   []byte
		max    int
		refuse bool
		events int // when not refused
	}{
		{"in the window", window, feedOf(10000, func(i int) string {
			return fmt.Sprintf("UID:e%d\r\nDTSTART:%s\r\n", i, at(now.Add(time.Duration(i)*time.Minute)))
		}), 100, true, 0},
		{"no window", feed.Options{Now: now}, feedOf(10000, func(i int) string {
			return fmt.Sprintf("UID:e%d\r\nDTSTART;TZID=Europe/Berlin:20000101T%02d0000\r\nDTEND;TZID=Europe/Berlin:20000101T230000\r\n", i, i%23)
		}), 100, true, 0},
		{"at the limit", window, feedOf(100, func(i int) string {
			return fmt.Sprintf("UID:e%d\r\nDTSTART:%s\r\n", i, at(now.Add(time.Duration(i)*time.Minute)))
		}), 100, false, 100},
		{"outside the window", window, feedOf(10000, func(i int) string {
			return fmt.Sprintf("UID:e%d\r\nDTSTART:%s\r\n", i, at(now.AddDate(-2, 0, 0).Add(time.Duration(i)*time.Minute)))
		}), 100, false, 0},
		{"one UID", window, feedOf(10000, func(i int) string {
			return fmt.Sprintf("UID:same\r\nDTSTART:%s\r\nSEQUENCE:%d\r\n", at(now.Add(time.Hour)), i)
		}), 100, false, 1},
		{"overrides of one series", window, feedOf(1000, func(i int) string {
			if i == 0 {
				return fmt.Sprintf("UID:s\r\nDTSTART:%s\r\nRRULE:FREQ=DAILY;COUNT=1000\r\n", at(now))
			}
			return fmt.Sprintf("UID:s\r\nRECURRENCE-ID:%s\r\nDTSTART:%s\r\n", at(now.AddDate(0, 0, i)), at(now.AddDate(0, 0, i).Add(time.Hour)))
		}), 100, false, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.MaxEvents = tc.max
			r := &countingReader{r: bytes.NewReader(tc.data)}
			cal, err := feed.Parse(r, opts)
			var lim *feed.LimitError
			if !tc.refuse {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(cal.Events) != tc.events {
					t.Fatalf("%d events, want %d", len(cal.Events), tc.events)
				}
				return
			}
			if !errors.As(err, &lim) || lim.Max != tc.max {
				t.Fatalf("err = %v, want a LimitError of %d", err, tc.max)
			}
			if c := calsyncd.ClassOf(err); c != calsyncd.ClassFeedOverLimit {
				t.Errorf("class %q", c)
			}
			if r.n > len(tc.data)/5 {
				t.Errorf("read %d of %d bytes before stopping", r.n, len(tc.data))
			}
			// ParseBytes stops the same way.
			if _, err := feed.ParseBytes(tc.data, opts); !errors.As(err, &lim) {
				t.Errorf("ParseBytes: %v", err)
			}
		})
	}
}
