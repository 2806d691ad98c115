// Package goparsers runs calsyncd's whole read of a feed beside the bare
// parse of the Go iCalendar parsers, on the same generated feeds, so that
// the comparison is measured, not quoted. It is a module of its own: the
// product never depends on the peers.
package goparsers

import (
	"bytes"
	"errors"
	"fmt"

	arran "github.com/arran4/golang-ical"
	"github.com/calsyncd/calsyncd/internal/feed"
	emersion "github.com/emersion/go-ical"
)

// Parser reads a whole feed held in memory and returns how many events it
// found.
type Parser struct {
	Name string
	// Doc says what the parser does with the feed.
	Doc   string
	Parse func(data []byte) (int, error)
}

// Parsers are calsyncd's read and its peers' bare parse, calsyncd first.
var Parsers = []Parser{
	{"calsyncd", "feed.ParseBytes: repairs, unfolding, unescaping, zones (Windows and VTIMEZONE), RRULE checks, de-duplication, normalised events and their hash", parseCalsyncd},
	{"golang-ical", "arran4/golang-ical ParseCalendar: the component tree, values still escaped, no zones", parseArran},
	{"go-ical", "emersion/go-ical Decoder.Decode: the component tree, values still escaped, no zones", parseEmersion},
}

// Find returns the parser of that name.
func Find(name string) (Parser, error) {
	for _, p := range Parsers {
		if p.Name == name {
			return p, nil
		}
	}
	return Parser{}, fmt.Errorf("no parser %q", name)
}

var errNoEvents = errors.New("no events")

func parseCalsyncd(data []byte) (int, error) {
	cal, err := feed.ParseBytes(data, feed.Options{})
	if err != nil {
		return 0, fmt.Errorf("calsyncd: %w", err)
	}
	return count(len(cal.Events))
}

func parseArran(data []byte) (int, error) {
	cal, err := arran.ParseCalendar(bytes.NewReader(data))
	if err != nil {
		return 0, fmt.Errorf("golang-ical: %w", err)
	}
	return count(len(cal.Events()))
}

func parseEmersion(data []byte) (int, error) {
	cal, err := emersion.NewDecoder(bytes.NewReader(data)).Decode()
	if err != nil {
		return 0, fmt.Errorf("go-ical: %w", err)
	}
	return count(len(cal.Events()))
}

func count(n int) (int, error) {
	if n == 0 {
		return 0, errNoEvents
	}
	return n, nil
}

// countEvents counts the BEGIN:VEVENT lines of a generated feed.
func countEvents(data []byte) int {
	return bytes.Count(data, []byte("\r\nBEGIN:VEVENT\r\n"))
}
