package feed_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/feed/corpus"
)

// FuzzParse feeds arbitrary bodies to the parser: it must never panic or
// hang, and whatever it accepts must be well-formed for the writer.
func FuzzParse(f *testing.F) {
	// The shared corpus when it is there (CI requires it); our own
	// fixtures and minimal reproductions always, so that a bare clone
	// still fuzzes from every shape.
	if _, ok := corpus.Available(); ok || os.Getenv(corpus.RequireEnv) == "1" {
		dir, files := corpus.Files(f)
		for _, name := range files {
			body, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(body)
		}
	}
	crashers, _ := filepath.Glob("testdata/regress/*.ics")
	own, _ := filepath.Glob("../../testdata/feeds/*.ics")
	defects, _ := filepath.Glob("../../testdata/feeds/defects/*.ics")
	if len(defects) == 0 {
		f.Fatal("no minimal reproductions in testdata/feeds/defects")
	}
	crashers = append(append(crashers, own...), defects...)
	for _, c := range crashers {
		body, err := os.ReadFile(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ids := []feed.Identity{feed.IdentityUID, feed.IdentityContent}
		if len(body) > 256<<10 {
			ids = ids[:1] // the 4 MB seed twice is seconds under -race
		}
		for _, id := range ids {
			cal, err := feed.ParseBytes(body, feed.Options{Identity: id})
			if err != nil {
				if cal != nil {
					t.Fatalf("error %v with a calendar", err)
				}
				continue
			}
			checkCalendar(t, cal)
			if !strings.Contains(string(body), "\uFFFD") && !brokenUTF8(body) {
				// No byte of the feed becomes U+FFFD,
				// unless it is UTF-8 with broken bytes.
				for _, ev := range cal.Events {
					for _, s := range []string{ev.UID, ev.Summary, ev.Description, ev.Location, ev.URL} {
						if strings.ContainsRune(s, utf8.RuneError) {
							t.Fatalf("%s: U+FFFD in %q, not in the feed", ev.Key(), s)
						}
					}
				}
			}
		}
	})
}

// brokenUTF8 reports whether body has valid multi-byte UTF-8 and bytes
// that are not UTF-8: only then may a broken byte become U+FFFD.
func brokenUTF8(body []byte) bool {
	valid, broken := false, false
	for len(body) > 0 {
		r, n := utf8.DecodeRune(body)
		switch {
		case r == utf8.RuneError && n == 1:
			broken = true
		case n > 1:
			valid = true
		}
		body = body[n:]
	}
	return valid && broken
}

// checkCalendar asserts what every parsed calendar guarantees.
func checkCalendar(t *testing.T, cal *feed.Calendar) {
	t.Helper()
	seen := map[string]bool{}
	for i, ev := range cal.Events {
		k := ev.Key().String()
		if ev.UID == "" {
			t.Fatalf("event %d has no UID", i)
		}
		if seen[k] {
			t.Fatalf("duplicate key %q", k)
		}
		seen[k] = true
		if i > 0 {
			prev := cal.Events[i-1]
			if prev.UID > ev.UID || prev.UID == ev.UID && prev.RecurrenceID > ev.RecurrenceID {
				t.Fatalf("events not sorted by key: %q before %q", prev.Key(), k)
			}
		}
		if ev.Hash == "" || ev.Hash != ev.ComputeHash() {
			t.Fatalf("%s: hash %q is not the content hash", k, ev.Hash)
		}
		if ev.Start.IsZero() || ev.End.T.Before(ev.Start.T) {
			t.Fatalf("%s: start %v end %v", k, ev.Start, ev.End)
		}
		if ev.Start.AllDay != ev.End.AllDay {
			t.Fatalf("%s: all-day start with a timed end or the reverse", k)
		}
		if ev.Start.AllDay && !ev.End.T.After(ev.Start.T) {
			t.Fatalf("%s: all-day event ends where it starts", k)
		}
		for _, s := range []string{ev.UID, ev.Summary, ev.Description, ev.Location, ev.URL} {
			if !utf8.ValidString(s) {
				t.Fatalf("%s: invalid UTF-8 %q", k, s)
			}
		}
		if ev.RecurrenceID != "" && len(ev.Recurrence) > 0 {
			t.Fatalf("%s: an instance with recurrence lines", k)
		}
		for _, line := range ev.Recurrence {
			if !slices.ContainsFunc([]string{"RRULE:", "RDATE", "EXDATE"}, func(p string) bool { return strings.HasPrefix(line, p) }) {
				t.Fatalf("%s: recurrence line %q", k, line)
			}
		}
	}
}
