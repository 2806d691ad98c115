package subscription_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// emptyEventsFeed is a feed of about size bytes of empty VEVENTs, each
// skipped with a warning (5 MB of them wrote 200,007 WARN
// lines, 33 MB, in one run).
func emptyEventsFeed(size int) []byte {
	const ev = "BEGIN:VEVENT\r\nEND:VEVENT\r\n"
	var b bytes.Buffer
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\n")
	b.WriteString(string(weeklyFeed(3))[len("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//guard test//EN\r\n"):strings.LastIndex(string(weeklyFeed(3)), "END:VCALENDAR")])
	for b.Len() < size {
		b.WriteString(ev)
	}
	b.WriteString("END:VCALENDAR\r\n")
	return b.Bytes()
}

// TestFeedWarningsAreSampled: a run logs the first 10 warnings of each
// kind and one line with each kind's total, however many the feed has.
func TestFeedWarningsAreSampled(t *testing.T) {
	h := newHarness(t, "")
	logs := captureLog(h) // debug: the most a run ever logs
	feed := emptyEventsFeed(5 << 20)
	h.setFeed(feed)
	rep := h.sync()
	lines := strings.Count(logs.String(), "\n")
	t.Logf("%d bytes of feed, %d warnings: %d log lines at debug, %d bytes", len(feed), len(rep.Warnings), lines, len(logs.String()))
	if len(rep.Warnings) < 200_000 || rep.Run.Created != 3 {
		t.Fatalf("the feed gave %d warnings and %d events; the test needs one warning per empty event", len(rep.Warnings), rep.Run.Created)
	}
	if lines > 20 {
		t.Errorf("%d log lines for one run, want at most 10 samples, a total and the run's line", lines)
	}
	if !strings.Contains(logs.String(), "feed warnings of one kind") {
		t.Errorf("no total line:\n%s", logs.String())
	}
}

// TestFeedWarningsAtInfoAreOneLine: at the default level the run's one
// line counts the warnings by kind.
func TestFeedWarningsAtInfoAreOneLine(t *testing.T) {
	h := newHarness(t, "")
	logs := &lockedBuffer{}
	h.runner.Log = slog.New(slog.NewTextHandler(logs, nil))
	h.setFeed(emptyEventsFeed(1 << 20))
	h.sync()
	if lines := strings.Count(logs.String(), "\n"); lines != 1 || !strings.Contains(logs.String(), "event N skipped: no DTSTART") {
		t.Errorf("%d lines at info, want the run's line with the warnings by kind:\n%s", lines, logs.String())
	}
}
