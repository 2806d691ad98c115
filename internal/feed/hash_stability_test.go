package feed

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed/corpus"
)

// TestHashStableAcrossCosmeticChanges proves, on every corpus file, that a
// feed which differs only in DTSTAMP, property order, event order, line
// folding or line endings yields the same keys and the same hashes: an
// unchanged feed costs zero writes. The variants are built from the
// cleaned (unfolded, repaired) text, so that moving a line never moves a
// raw continuation away from its property.
func TestHashStableAcrossCosmeticChanges(t *testing.T) {
	dir := corpus.Dir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.ics"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	for _, path := range files {
		name, _ := filepath.Rel(dir, path)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := hashes(t, body)
			cl, err := clean(body)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(string(cl.data), "\n"), "\n")
			// LF throughout except where CRLF is the change; the original
			// file (want) is CRLF or LF as published.
			variants := map[string]string{
				"DTSTAMP regenerated":       join(shiftStamps(lines), "\n"),
				"properties reversed":       join(reverseProperties(lines), "\n"),
				"events reversed":           join(reverseComponents(lines), "\n"),
				"CRLF, folded at 20 octets": join(fold(lines, 20), "\r\n"),
				"all at once, folded at 33": join(fold(reverseProperties(reverseComponents(shiftStamps(lines))), 33), "\r\n"),
			}
			if len(body) > 1<<20 {
				// The 4 MB feed gets the combined variant only: each
				// parse of it costs seconds under -race.
				for k := range variants {
					if !strings.HasPrefix(k, "all at once") {
						delete(variants, k)
					}
				}
			}
			for vname, v := range variants {
				got := hashes(t, []byte(v))
				if len(got) != len(want) {
					t.Errorf("%s: %d events, want %d", vname, len(got), len(want))
					continue
				}
				for k, h := range want {
					if got[k] != h {
						t.Errorf("%s: event %s hash %q, want %q", vname, k, got[k], h)
					}
				}
			}
		})
	}
}

func hashes(t *testing.T, body []byte) map[string]string {
	t.Helper()
	cal, err := ParseBytes(body, Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]string, len(cal.Events))
	for _, ev := range cal.Events {
		m[ev.Key().String()] = ev.Hash
	}
	return m
}

func join(lines []string, eol string) string { return strings.Join(lines, eol) + eol }

// shiftStamps moves every DTSTAMP a day later, as a server that stamps
// each response with the time of the request does.
func shiftStamps(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l
		if v, ok := strings.CutPrefix(l, "DTSTAMP:"); ok {
			if ts, err := time.Parse("20060102T150405Z", v); err == nil {
				out[i] = "DTSTAMP:" + ts.AddDate(0, 0, 1).Format("20060102T150405Z")
			}
		}
	}
	return out
}

// block is a component: its BEGIN line, property lines, subcomponents and
// END line.
type block struct {
	begin, end string
	props      []string
	subs       []*block
}

func parseBlocks(lines []string) *block {
	root := &block{}
	stack := []*block{root}
	for _, l := range lines {
		top := stack[len(stack)-1]
		switch {
		case strings.HasPrefix(l, "BEGIN:"):
			b := &block{begin: l}
			top.subs = append(top.subs, b)
			stack = append(stack, b)
		case strings.HasPrefix(l, "END:"):
			top.end = l
			stack = stack[:len(stack)-1]
		default:
			top.props = append(top.props, l)
		}
	}
	return root
}

func (b *block) lines() []string {
	var out []string
	if b.begin != "" {
		out = append(out, b.begin)
	}
	out = append(out, b.props...)
	for _, s := range b.subs {
		out = append(out, s.lines()...)
	}
	if b.end != "" {
		out = append(out, b.end)
	}
	return out
}

func reverseProperties(lines []string) []string {
	root := parseBlocks(lines)
	var walk func(b *block)
	walk = func(b *block) {
		for i, j := 0, len(b.props)-1; i < j; i, j = i+1, j-1 {
			b.props[i], b.props[j] = b.props[j], b.props[i]
		}
		for _, s := range b.subs {
			walk(s)
		}
	}
	walk(root)
	return root.lines()
}

// reverseComponents reverses the calendar's components (events, zones).
func reverseComponents(lines []string) []string {
	root := parseBlocks(lines)
	cal := root.subs[0]
	subs := cal.subs
	for i, j := 0, len(subs)-1; i < j; i, j = i+1, j-1 {
		subs[i], subs[j] = subs[j], subs[i]
	}
	return root.lines()
}

// fold folds lines at n octets, splitting UTF-8 sequences where they fall
// (RFC 5545 says not to, producers do).
func fold(lines []string, n int) []string {
	var out []string
	for _, l := range lines {
		b := []byte(l)
		first := true
		for len(b) > n {
			var buf bytes.Buffer
			if !first {
				buf.WriteByte(' ')
			}
			buf.Write(b[:n])
			out = append(out, buf.String())
			b = b[n:]
			first = false
		}
		if first {
			out = append(out, string(b))
		} else {
			out = append(out, " "+string(b))
		}
	}
	return out
}
