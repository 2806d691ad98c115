package feed_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestHashValuesArePinned pins the content hash of every event of the
// sample feeds: a change in what the hash covers, or in how it is
// computed, rewrites every mirrored event once (hashVersion exists for
// that), so it must never happen by accident.
func TestHashValuesArePinned(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "feeds", "*.ics"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample feeds: %v", err)
	}
	var b strings.Builder
	for _, path := range files {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []feed.Identity{feed.IdentityUID, feed.IdentityContent} {
			cal, err := feed.ParseBytes(body, feed.Options{Identity: id, DefaultZone: "Europe/Berlin", Now: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)})
			if err != nil {
				t.Fatal(err)
			}
			for i := range cal.Events {
				ev := &cal.Events[i]
				fmt.Fprintf(&b, "%s %s %s %s\n", filepath.Base(path), id, ev.Key(), ev.Hash)
			}
		}
	}
	golden := filepath.Join("testdata", "hashes.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < min(len(gl), len(wl)); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("hashes differ from %s (run with -update only if every mirrored event is meant to be rewritten):\ngot  %s\nwant %s", golden, gl[i], wl[i])
			}
		}
		t.Fatalf("hashes differ from %s: %d lines, want %d", golden, len(gl), len(wl))
	}
}
