// Package demo is `calsyncd demo`: sample feeds served with their dates
// moved to the present, and a scripted story (first sync, a change, a rate
// limit burst and the recovery) told through the real daemon against the
// built-in Google Calendar emulator.
package demo

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/calsyncd/calsyncd"
)

// Anchor is the Monday the sample feeds were written around; the demo moves
// every date by whole weeks so that this week is the current one, keeping
// weekdays (and weekly series) intact.
var Anchor = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// WeeksFromAnchor is how many whole weeks now's week is after Anchor's.
func WeeksFromAnchor(now time.Time) int {
	d := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	monday := d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	return int(monday.Sub(Anchor).Hours()) / (24 * 7)
}

var (
	dateValue = regexp.MustCompile(`\b(\d{8})(T\d{6}Z?)?\b`)
	untilPart = regexp.MustCompile(`(UNTIL=)(\d{8})(T\d{6}Z?)?`)
)

// shiftedProps carry the dates that place an event in time.
var shiftedProps = map[string]bool{"DTSTART": true, "DTEND": true, "RECURRENCE-ID": true, "EXDATE": true, "RDATE": true, "DUE": true}

// Shift moves every event date of an iCalendar body by days. Time-zone
// definitions, stamps and identifiers are left alone; folded lines are
// unfolded first so a value split across lines is still found.
func Shift(body []byte, days int) []byte {
	if days == 0 {
		return body
	}
	text := strings.ReplaceAll(string(body), "\r\n ", "")
	text = strings.ReplaceAll(text, "\n ", "")
	lines := strings.SplitAfter(text, "\n")
	inTZ := false
	shift := func(date, tm string) string {
		d, err := time.Parse("20060102", date)
		if err != nil {
			return date + tm
		}
		return d.AddDate(0, 0, days).Format("20060102") + tm
	}
	for i, line := range lines {
		trimmed := strings.TrimRight(line, "\r\n")
		switch strings.ToUpper(trimmed) {
		case "BEGIN:VTIMEZONE":
			inTZ = true
		case "END:VTIMEZONE":
			inTZ = false
		}
		if inTZ {
			continue
		}
		colon := strings.IndexByte(trimmed, ':')
		if colon < 0 {
			continue
		}
		name := strings.ToUpper(trimmed[:colon])
		if semi := strings.IndexByte(name, ';'); semi >= 0 {
			name = name[:semi]
		}
		value := trimmed[colon+1:]
		switch {
		case shiftedProps[name]:
			value = dateValue.ReplaceAllStringFunc(value, func(m string) string {
				sub := dateValue.FindStringSubmatch(m)
				return shift(sub[1], sub[2])
			})
		case name == "RRULE":
			value = untilPart.ReplaceAllStringFunc(value, func(m string) string {
				sub := untilPart.FindStringSubmatch(m)
				return sub[1] + shift(sub[2], sub[3])
			})
		default:
			continue
		}
		lines[i] = trimmed[:colon+1] + value + line[len(trimmed):]
	}
	return []byte(strings.Join(lines, ""))
}

// Feeds serves the sample feeds (moved to the present) and lets the story
// change them between syncs.
type Feeds struct {
	mu    sync.Mutex
	files map[string][]byte
	days  int
}

// NewFeeds loads the embedded sample feeds, moved to now's week.
func NewFeeds(now time.Time) (*Feeds, error) {
	sub, err := fs.Sub(calsyncd.SampleFeeds, "testdata/feeds")
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(sub, ".")
	if err != nil {
		return nil, err
	}
	f := &Feeds{files: map[string][]byte{}, days: 7 * WeeksFromAnchor(now)}
	for _, e := range entries {
		b, err := fs.ReadFile(sub, e.Name())
		if err != nil {
			return nil, err
		}
		f.files[e.Name()] = Shift(b, f.days)
	}
	return f, nil
}

// Names lists the feeds, sorted.
func (f *Feeds) Names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.files))
	for n := range f.files {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Date returns an anchor-relative date (days after Anchor) as the feeds
// now write it, for events the story adds.
func (f *Feeds) Date(daysAfterAnchor int) time.Time {
	return Anchor.AddDate(0, 0, f.days+daysAfterAnchor)
}

// Edit changes a feed's body.
func (f *Feeds) Edit(name string, edit func(body string) string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.files[name]
	if !ok {
		return fmt.Errorf("demo: no feed %s", name)
	}
	f.files[name] = []byte(edit(string(b)))
	return nil
}

// ServeHTTP serves /NAME.ics.
func (f *Feeds) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := path.Base(r.URL.Path)
	f.mu.Lock()
	b, ok := f.files[name]
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
}
