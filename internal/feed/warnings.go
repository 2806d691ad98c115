package feed

import (
	"strconv"
	"strings"
)

// Skipped reports whether the warning is about an event (or another
// component) left out of the feed's events: unreadable, or without what
// an event needs.
func (w Warning) Skipped() bool { return strings.Contains(w.Message, " skipped: ") }

// Zone is the time zone the warning says no IANA zone was found for (a
// TZID, or the feed's X-WR-TIMEZONE), and whether it says so; custom
// zones kept with the feed's own rules count too, since Google cannot
// name them (their events show with a UTC zone, their series as single
// events).
func (w Warning) Zone() (string, bool) {
	for _, prefix := range []string{"unknown time zone ", "time zone ", "unknown calendar time zone "} {
		rest, ok := strings.CutPrefix(w.Message, prefix)
		if !ok || !strings.HasPrefix(rest, `"`) {
			continue
		}
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			continue
		}
		tail := rest[len(q):]
		if !strings.HasPrefix(tail, ": its times are read as") && !strings.HasPrefix(tail, " matches no IANA zone") && tail != " ignored" {
			continue
		}
		name, err := strconv.Unquote(q)
		if err != nil {
			continue
		}
		return name, true
	}
	return "", false
}
