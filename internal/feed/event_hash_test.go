package feed

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed/feedgen"
)

// legacyHash is ComputeHash as first written (a hash.Hash fed field by
// field): the hashes stored in every state database must not change.
func legacyHash(e *Event) string {
	h := sha256.New()
	var num [20]byte
	w := func(s string) {
		h.Write(strconv.AppendInt(num[:0], int64(len(s)), 10))
		h.Write([]byte{':'})
		io.WriteString(h, s)
	}
	w(hashVersion)
	w(e.Summary)
	w(e.Description)
	w(e.Location)
	w(e.URL)
	for _, t := range [2]Time{e.Start, e.End} {
		if t.AllDay {
			w("D" + t.Date())
		} else {
			w("T" + strconv.FormatInt(t.T.Unix(), 10) + "@" + t.Zone)
		}
	}
	w(e.Status)
	w(e.Transparency)
	w(e.Visibility)
	if e.ThisAndFuture {
		w("thisandfuture")
	}
	rec := e.Recurrence
	if !slices.IsSorted(rec) {
		rec = slices.Sorted(slices.Values(rec))
	}
	for _, r := range rec {
		w(r)
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:16])
}

func TestComputeHashUnchanged(t *testing.T) {
	var events []Event
	files, _ := filepath.Glob("../../testdata/feeds/*.ics")
	bodies := [][]byte{}
	for _, f := range files {
		bodies = append(bodies, mustRead(t, f))
	}
	for _, s := range feedgen.Shapes {
		bodies = append(bodies, s.Generate(200))
	}
	for _, b := range bodies {
		events = append(events, mustParseBytes(t, b).Events...)
	}
	long := string(make([]byte, 5000))
	berlin, _ := time.LoadLocation("Europe/Berlin")
	events = append(events,
		Event{},
		Event{Summary: long, Description: long, ThisAndFuture: true, Recurrence: []string{"RRULE:FREQ=DAILY", "EXDATE:20260101T000000Z", "RDATE:20250101T000000Z"},
			Start: Time{T: time.Date(2026, 3, 29, 2, 30, 0, 0, berlin), Zone: "Europe/Berlin"}, End: Time{T: time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC)}},
		Event{Start: Time{AllDay: true, T: time.Date(12026, 1, 1, 0, 0, 0, 0, time.UTC)}, End: Time{AllDay: true, T: time.Date(1583, 1, 1, 0, 0, 0, 0, time.UTC)}},
	)
	if len(events) < 500 {
		t.Fatalf("only %d events", len(events))
	}
	for i := range events {
		if got, want := events[i].ComputeHash(), legacyHash(&events[i]); got != want {
			t.Fatalf("event %d (%s): hash %s, was %s", i, events[i].UID, got, want)
		}
	}
}
