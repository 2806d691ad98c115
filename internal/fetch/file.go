package fetch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"
)

// fetchFile reads a file:// feed within the Fetcher's Timeout and the
// context. A named pipe with no writer, or a file on a hung network
// filesystem, would otherwise block the sync forever: the read
// runs in its own goroutine and the fetch stops waiting when time is up.
// For a FIFO the reader is then released (see release); a read stuck in
// the kernel on a hung filesystem ends when the filesystem answers.
// Only regular files and FIFOs are read: /dev/zero or a directory is not a
// feed. Errors never name the path.
func (f *Fetcher) fetchFile(ctx context.Context, path string) (*Response, error) {
	resp, err := f.readFile(ctx, path)
	var fe *Error
	if errors.As(err, &fe) && fe.Path == "" {
		fe.Path = path
	}
	return resp, err
}

func (f *Fetcher) readFile(ctx context.Context, path string) (*Response, error) {
	if f.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.Timeout)
		defer cancel()
	}
	if err := ctx.Err(); err != nil {
		return nil, fileTimeout(err)
	}
	r := &fileRead{path: path, limit: f.limit(), opened: make(chan struct{}), done: make(chan fileResult, 1)}
	go r.run(ctx)
	select {
	case res := <-r.done:
		if res.err != nil {
			return nil, res.err
		}
		if err := f.accept(res.body); err != nil {
			return nil, err
		}
		return &Response{Body: res.body, BodyHash: hashBody(res.body)}, nil
	case <-ctx.Done():
		r.release()
		return nil, fileTimeout(ctx.Err())
	}
}

type fileResult struct {
	body []byte
	err  error
}

// fileRead is one read of a feed file, run in its own goroutine.
type fileRead struct {
	path  string
	limit int64

	mu   sync.Mutex
	fifo bool // the goroutine is about to open a FIFO (or has)
	// opened is closed when the goroutine's open of the FIFO returned.
	opened chan struct{}
	done   chan fileResult
}

func (r *fileRead) run(ctx context.Context) {
	body, err := r.read(ctx)
	r.done <- fileResult{body, err}
}

func (r *fileRead) read(ctx context.Context) ([]byte, error) {
	st, err := os.Stat(r.path)
	if err != nil {
		return nil, &Error{Kind: Unreachable, Msg: "cannot open the feed file", Err: errors.Unwrap(err)}
	}
	mode := st.Mode()
	switch {
	case mode.IsRegular():
		if st.Size() > r.limit {
			return nil, tooLarge(r.limit)
		}
	case mode&fs.ModeNamedPipe != 0:
		// Opening a FIFO blocks until a writer comes. Say so under the
		// lock unless the fetch has already given up, so release knows
		// whether there is a blocked open to wake.
		r.mu.Lock()
		if err := ctx.Err(); err != nil {
			r.mu.Unlock()
			return nil, fileTimeout(err)
		}
		r.fifo = true
		r.mu.Unlock()
	default:
		return nil, &Error{Kind: Rejected, Msg: fmt.Sprintf("the feed path is not a regular file or a FIFO (%s)", describeMode(mode))}
	}
	fh, err := os.Open(r.path)
	if r.fifo {
		close(r.opened)
	}
	if err != nil {
		return nil, &Error{Kind: Unreachable, Msg: "cannot open the feed file", Err: errors.Unwrap(err)}
	}
	defer fh.Close()
	if err := ctx.Err(); err != nil {
		return nil, fileTimeout(err)
	}
	if r.fifo {
		// A pipe is read through the poller: a deadline interrupts it.
		if d, ok := ctx.Deadline(); ok {
			_ = fh.SetReadDeadline(d)
		}
		stop := context.AfterFunc(ctx, func() { _ = fh.SetReadDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	body, err := readCapped(fh, r.limit)
	if err != nil && (errors.Is(err, os.ErrDeadlineExceeded) || ctx.Err() != nil) {
		// The read deadline may fire a moment before the context's timer.
		cause := ctx.Err()
		if cause == nil {
			cause = context.DeadlineExceeded
		}
		return nil, fileTimeout(cause)
	}
	return body, err
}

// release lets a FIFO read that the fetch gave up on finish: an open still
// waiting for a writer is woken by opening the FIFO read-write ourselves
// (which never blocks on Linux and counts as a writer), held until that
// open has returned; the read then sees the expired context and closes.
// The fetch waits for it, so no reader is left behind on the pipe.
func (r *fileRead) release() {
	r.mu.Lock()
	fifo := r.fifo
	r.mu.Unlock()
	if !fifo {
		return
	}
	if w, err := os.OpenFile(r.path, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
		<-r.opened
		w.Close()
	}
	<-r.done
}

func fileTimeout(err error) *Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Kind: Unreachable, Msg: "the feed file could not be read in time (feed.timeout)", Err: err}
	}
	return &Error{Kind: Unreachable, Msg: "reading the feed file was interrupted", Err: err}
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.Type().String()
}
