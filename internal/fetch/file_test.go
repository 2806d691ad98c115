package fetch_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
)

// fifo makes a named pipe in a fresh directory.
func fifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "feed.ics")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	return path
}

// noReaderLeft checks that the fetch closed its end of the FIFO: opening
// it for writing without blocking fails with ENXIO when nobody reads.
func noReaderLeft(t *testing.T, path string) {
	t.Helper()
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		syscall.Close(fd)
		t.Errorf("the fetch left the FIFO open for reading")
	} else if !errors.Is(err, syscall.ENXIO) {
		t.Errorf("open for writing: %v, want ENXIO", err)
	}
}

// fileFetcher reads files with a small total timeout (HTTP is not used).
func fileFetcher(timeout time.Duration, maxSize int64) *fetch.Fetcher {
	return fetch.NewFetcher(time.Second, timeout, maxSize, feed.CheckBody)
}

// The feed.timeout bounds a FIFO nobody writes to: the
// read used to block sync forever.
func TestFileFeedFIFOWithoutWriterTimesOut(t *testing.T) {
	path := fifo(t)
	start := time.Now()
	_, err := fileFetcher(50*time.Millisecond, 1<<20).Fetch(context.Background(), fetch.Request{URL: "file://" + path})
	fe := fetchErr(t, err)
	if fe.Kind != fetch.Unreachable || !strings.Contains(err.Error(), "in time") {
		t.Errorf("got %v (kind %s), want an unreachable timeout", err, fe.Kind)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error does not wrap context.DeadlineExceeded: %v", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error does not name the path: %v", err)
	}
	// Not a timing test: a generous bound, so a hang fails here and not at
	// the suite's deadline.
	if waited := time.Since(start); waited > 10*time.Second {
		t.Errorf("returned after %v", waited)
	}
	noReaderLeft(t, path)
}

func TestFileFeedObeysTheContext(t *testing.T) {
	path := fifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := fileFetcher(time.Hour, 1<<20).Fetch(ctx, fetch.Request{URL: "file://" + path})
	if fe := fetchErr(t, err); fe.Kind != fetch.Unreachable || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled fetch: %v", err)
	}
	noReaderLeft(t, path)
}

// writeFIFO opens the FIFO for writing (blocking until the fetch opens it
// for reading), writes data and, unless hold is set, closes it. With hold
// the writer stalls until the test ends.
func writeFIFO(t *testing.T, path, data string, hold bool) {
	t.Helper()
	stop := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() { close(stop); <-done })
	go func() {
		defer close(done)
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		_, _ = w.WriteString(data)
		if hold {
			<-stop
		}
	}()
}

func TestFileFeedFromAFIFO(t *testing.T) {
	t.Run("a writer that finishes", func(t *testing.T) {
		path := fifo(t)
		writeFIFO(t, path, smallCalendar, false)
		resp, err := fileFetcher(time.Minute, 1<<20).Fetch(context.Background(), fetch.Request{URL: "file://" + path})
		if err != nil || string(resp.Body) != smallCalendar {
			t.Fatalf("fetch: %v", err)
		}
	})
	t.Run("a writer that stalls", func(t *testing.T) {
		path := fifo(t)
		writeFIFO(t, path, smallCalendar[:20], true)
		_, err := fileFetcher(50*time.Millisecond, 1<<20).Fetch(context.Background(), fetch.Request{URL: "file://" + path})
		if fe := fetchErr(t, err); fe.Kind != fetch.Unreachable || !strings.Contains(err.Error(), "in time") {
			t.Errorf("stalled writer: %v", err)
		}
	})
	t.Run("a writer that never stops", func(t *testing.T) {
		path := fifo(t)
		writeFIFO(t, path, strings.Repeat("X-PAD:xxxxxxxxxxxxxxxxxxxxxxxxxx\r\n", 1000), true)
		_, err := fileFetcher(time.Minute, 4096).Fetch(context.Background(), fetch.Request{URL: "file://" + path})
		if fe := fetchErr(t, err); fe.Kind != fetch.TooLarge {
			t.Errorf("endless FIFO: %v", err)
		}
	})
}

func TestFileFeedSizeCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.ics")
	big := "BEGIN:VCALENDAR\r\n" + strings.Repeat("X-PAD:"+strings.Repeat("x", 100)+"\r\n", 100) + "END:VCALENDAR\r\n"
	if err := os.WriteFile(path, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := fileFetcher(time.Minute, 4096).Fetch(context.Background(), fetch.Request{URL: "file://" + path})
	if fe := fetchErr(t, err); fe.Kind != fetch.TooLarge {
		t.Errorf("big file: %v", err)
	}
}

// Only regular files and FIFOs are feeds: /dev/zero would be read up to
// the cap, a directory or a terminal make no sense.
func TestFileFeedRefusesWhatIsNotAFile(t *testing.T) {
	paths := map[string]string{"directory": t.TempDir()}
	for _, dev := range []string{"/dev/zero", "/dev/null", "/dev/urandom"} {
		if _, err := os.Stat(dev); err == nil {
			paths[dev] = dev
		}
	}
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			_, err := fileFetcher(time.Minute, 1<<20).Fetch(context.Background(), fetch.Request{URL: "file://" + path})
			fe := fetchErr(t, err)
			if fe.Kind != fetch.Rejected || !strings.Contains(err.Error(), "regular file") {
				t.Errorf("%s: %v (kind %s)", path, err, fe.Kind)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error does not name the path: %v", err)
			}
		})
	}
}

// Every file error names the file: it is a path on this machine, and the
// operator needs it to fix the feed.
func TestAMissingFileFeedNamesItsPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "feeds", "missing.ics")
	_, err := fileFetcher(time.Minute, 1<<20).Fetch(context.Background(), fetch.Request{URL: "file://" + path})
	fe := fetchErr(t, err)
	if fe.Path != path || !strings.Contains(err.Error(), path) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%v (path %q)", err, fe.Path)
	}
}
