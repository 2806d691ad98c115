package feed

import (
	"bytes"
	"io"
)

// lineSource yields a feed's physical lines, without their terminator
// (CRLF, LF or a lone CR), from a body in memory or from a stream read a
// buffer at a time. A line is valid until the next call of next.
type lineSource struct {
	r   io.Reader // nil: buf is the whole body
	buf []byte
	// The unread bytes are buf[pos:end].
	pos, end int
	eof      bool
	err      error // a read error other than io.EOF
	// buf[pos:lfScan] holds no '\n' and buf[pos:crScan] no '\r': a line
	// longer than one read is not searched again from its start.
	lfScan, crScan int
	stalls         int // reads in a row that returned nothing
}

// readChunk is how much of a stream is read at a time.
const readChunk = 64 << 10

func bytesSource(b []byte) *lineSource {
	return &lineSource{buf: b, end: len(b), eof: true}
}

func readerSource(r io.Reader) *lineSource {
	return &lineSource{r: r, buf: make([]byte, readChunk)}
}

// fill reads more of the stream, keeping the unread bytes.
func (s *lineSource) fill() {
	if s.eof {
		return
	}
	if s.pos > 0 {
		n := copy(s.buf, s.buf[s.pos:s.end])
		s.lfScan = max(s.lfScan-s.pos, 0)
		s.crScan = max(s.crScan-s.pos, 0)
		s.pos, s.end = 0, n
	}
	if len(s.buf)-s.end < readChunk/2 {
		// A line longer than the buffer: grow it.
		nb := make([]byte, 2*len(s.buf))
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	n, err := s.r.Read(s.buf[s.end:])
	s.end += n
	switch {
	case err == io.EOF:
		s.eof = true
	case err != nil:
		s.eof, s.err = true, err
	case n == 0:
		if s.stalls++; s.stalls > 100 {
			s.eof, s.err = true, io.ErrNoProgress
		}
	default:
		s.stalls = 0
	}
}

// find returns the index in buf of the first c in buf[pos:limit], or -1;
// *scan remembers how far there is none.
func (s *lineSource) find(c byte, scan *int, limit int) int {
	from := max(*scan, s.pos)
	if from < limit {
		if i := bytes.IndexByte(s.buf[from:limit], c); i >= 0 {
			*scan = from + i
			return from + i
		}
	}
	*scan = max(limit, *scan)
	return -1
}

// next returns the next physical line; false at the end of the body.
func (s *lineSource) next() ([]byte, bool) {
	for {
		lf := s.find('\n', &s.lfScan, s.end)
		limit := s.end
		if lf >= 0 {
			limit = lf
		}
		cr := s.find('\r', &s.crScan, limit)
		switch {
		case cr >= 0 && (cr+1 < s.end || s.eof):
			line := s.buf[s.pos:cr]
			s.pos = cr + 1
			if s.pos < s.end && s.buf[s.pos] == '\n' {
				s.pos++
			}
			return line, true
		case cr < 0 && lf >= 0:
			line := s.buf[s.pos:lf]
			s.pos = lf + 1
			return line, true
		case cr < 0 && s.eof:
			if s.pos == s.end {
				return nil, false
			}
			line := s.buf[s.pos:s.end]
			s.pos = s.end
			return line, true
		}
		// No whole line buffered, or a CR that may start a CRLF.
		s.fill()
	}
}

// head returns the unread bytes after reading enough of a stream to see n
// bytes past any leading white space (or all of it, if shorter).
func (s *lineSource) head(n int) []byte {
	for !s.eof {
		rest := bytes.TrimLeft(s.buf[s.pos:s.end], " \t\r\n")
		if len(rest) >= n {
			break
		}
		s.fill()
	}
	return s.buf[s.pos:s.end]
}

// skipBOM drops a UTF-8 byte order mark at the start of the body.
func (s *lineSource) skipBOM() {
	const bom = "\xef\xbb\xbf"
	for s.end-s.pos < len(bom) && !s.eof {
		s.fill()
	}
	if bytes.HasPrefix(s.buf[s.pos:s.end], []byte(bom)) {
		s.pos += len(bom)
	}
}
