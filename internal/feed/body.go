package feed

import (
	"bytes"
	"fmt"
)

// CheckBody refuses a body that is not a calendar: an HTML page, an empty
// answer, anything that does not start with BEGIN:VCALENDAR. A body cut
// before END:VCALENDAR passes: Parse reads its whole components and says
// how it stopped (Calendar.Cut), and the caller deletes nothing on its
// strength. The fetcher runs it before the body's validators can be kept
// (fetch.Fetcher.Accept); Parse refuses the same bodies on its own.
func CheckBody(body []byte) error {
	b := bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if err := sniff(b); err != nil {
		return fmt.Errorf("the body is not a calendar: %w", err)
	}
	return nil
}
