package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net/http"
	"strings"
)

// Stream is a feed's body as it arrives: within the size cap, un-gzipped,
// and hashed as it is read, so that a reader (the parser) need not hold
// the whole body. Read errors are *Error values (TooLarge past the cap,
// Unreachable when the download breaks off). Close it.
type Stream struct {
	r      io.Reader
	closer func() error
	limit  int64
	n      int64
	h      hash.Hash
	sum    string // the body's hash, once read to its end
	err    error  // io.EOF at the end, else the *Error the read failed with
	// mem is the whole body when it is already in memory (a file), and
	// memSum its hash: Whole hands them over without a copy.
	mem    []byte
	memSum string
	// size is how long the body says it is (Content-Length), 0 when
	// unknown: Whole's first allocation.
	size int64
}

func newStream(r io.Reader, closer func() error, limit int64) *Stream {
	if closer == nil {
		closer = func() error { return nil }
	}
	return &Stream{r: r, closer: closer, limit: limit, h: sha256.New()}
}

// memStream streams a body already in memory, its hash known.
func memStream(body []byte, sum string, limit int64) *Stream {
	s := newStream(bytes.NewReader(body), nil, limit)
	s.mem, s.memSum = body, sum
	return s
}

// Whole reads the rest of the body and returns it with its hash: for a
// reader that compares the hash before it reads the body (an unchanged
// feed without validators is then never parsed). A body already in
// memory is returned as it is. Errors are Read's.
func (s *Stream) Whole() ([]byte, string, error) {
	if s.mem != nil && s.n == 0 && s.err == nil {
		s.n, s.err, s.sum = int64(len(s.mem)), io.EOF, s.memSum
		body := s.mem
		s.mem = nil
		return body, s.sum, nil
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(max(s.size, 0), s.limit)+bytes.MinRead))
	if _, err := buf.ReadFrom(s); err != nil {
		return nil, "", err
	}
	if s.err != io.EOF {
		return nil, "", s.err
	}
	return buf.Bytes(), s.sum, nil
}

// Read implements io.Reader.
func (s *Stream) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if room := s.limit + 1 - s.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := s.r.Read(p)
	s.n += int64(n)
	if s.n > s.limit {
		s.err = tooLarge(s.limit)
		return 0, s.err
	}
	s.h.Write(p[:n])
	switch {
	case err == io.EOF:
		s.err = io.EOF
		s.sum = hex.EncodeToString(s.h.Sum(nil))
	case err != nil:
		s.err = &Error{Kind: Unreachable, Msg: "the feed download broke off", Err: stripURL(err)}
	}
	return n, s.err
}

// Finish reads what is left of the body (a reader may stop at
// END:VCALENDAR) and returns its hash, or the error the download ended
// with.
func (s *Stream) Finish() (string, error) {
	if _, err := io.Copy(io.Discard, s); err != nil {
		return "", err
	}
	if s.err != io.EOF {
		return "", s.err
	}
	return s.sum, nil
}

// Err is the error the download failed with, if it did (not a parse
// error: a body cut short or too large reads as a broken feed to a
// parser, but it is the fetch that failed).
func (s *Stream) Err() error {
	if s.err == io.EOF {
		return nil
	}
	return s.err
}

// Close releases the connection.
func (s *Stream) Close() error { return s.closer() }

// Open is Fetch without reading the body: a 200 answer's Response carries
// Stream instead of Body, and BodyHash is Stream's to give (Finish). The
// Fetcher's Accept is not run: whoever reads the stream checks what it
// reads (feed.Parse refuses every body feed.CheckBody refuses). A file://
// feed is read whole, within its timeout, and streamed from memory.
func (f *Fetcher) Open(ctx context.Context, req Request) (*Response, error) {
	resp, err := f.open(ctx, req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	body := resp.Body
	resp.Stream, resp.Body, resp.BodyHash = memStream(body, resp.BodyHash, f.limit()), nil, ""
	return resp, nil
}

// stream is the body of a 200 answer within the size cap, un-gzipped when
// it is ours to.
func (f *Fetcher) stream(resp *http.Response) (*Stream, error) {
	limit := f.limit()
	if resp.ContentLength > limit && !resp.Uncompressed && resp.Header.Get("Content-Encoding") == "" {
		resp.Body.Close()
		return nil, tooLarge(limit)
	}
	// Go's transport un-gzips by itself only when it asked for gzip; with
	// a configured Accept-Encoding header, or a server that gzips unasked,
	// it is ours to do.
	if !resp.Uncompressed && strings.EqualFold(strings.TrimSpace(resp.Header.Get("Content-Encoding")), "gzip") {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			resp.Body.Close()
			return nil, &Error{Kind: Invalid, Msg: "the feed claims gzip but is not", Err: err}
		}
		return newStream(zr, func() error { return errors.Join(zr.Close(), resp.Body.Close()) }, limit), nil
	}
	s := newStream(resp.Body, resp.Body.Close, limit)
	s.size = resp.ContentLength
	return s, nil
}
