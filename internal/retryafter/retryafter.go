// Package retryafter reads HTTP Retry-After headers. Feed servers and
// Google both send them; the feed fetcher and the Google writer read them
// here, so neither depends on the other.
package retryafter

import (
	"net/http"
	"strings"
	"time"
)

// Max bounds every wait a Retry-After may ask for.
const Max = 24 * time.Hour

// Parse reads a Retry-After header, in seconds or as an HTTP date; an HTTP
// date is measured against the answer's Date header when there is one (so
// a skewed local clock does not stretch or shrink it). It is never
// negative and never more than Max.
func Parse(v, date string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var n int64
	isNum := true
	for _, r := range v {
		if r < '0' || r > '9' {
			isNum = false
			break
		}
		if n = n*10 + int64(r-'0'); n > int64(Max/time.Second) {
			n = int64(Max / time.Second)
		}
	}
	if isNum {
		return time.Duration(n) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if d, err := http.ParseTime(strings.TrimSpace(date)); err == nil {
		now = d
	}
	return min(max(t.Sub(now), 0), Max)
}
