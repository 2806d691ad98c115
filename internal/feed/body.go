package feed

import (
	"bytes"
	"fmt"
)

// CheckBody refuses a body that is not a whole calendar: an HTML page, an
// empty answer, or a download cut before END:VCALENDAR. The fetcher runs it
// before the body's validators can be kept (fetch.Fetcher.Accept); Parse
// refuses the same bodies on its own.
func CheckBody(body []byte) error {
	b := bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if err := sniff(b); err != nil {
		return fmt.Errorf("the body is not a calendar: %w", err)
	}
	if !containsFold(b, []byte("END:VCALENDAR")) {
		return fmt.Errorf("the body is not a whole calendar: %w: %w", ErrTruncated, ErrNotCalendar)
	}
	return nil
}

// containsFold reports whether b contains the upper-case ASCII word w in
// any case.
func containsFold(b, w []byte) bool {
	for i := 0; i+len(w) <= len(b); {
		j := bytes.IndexAny(b[i:], string([]byte{w[0], w[0] + 'a' - 'A'}))
		if j < 0 || i+j+len(w) > len(b) {
			return false
		}
		if bytes.EqualFold(b[i+j:i+j+len(w)], w) {
			return true
		}
		i += j + 1
	}
	return false
}
