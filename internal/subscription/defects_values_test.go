package subscription_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestValueDefectsShowInGoogle mirrors the feed's value reproductions as
// a server may serve them (with the charset it declares) and compares
// what Google shows with the instances written out by hand.
func TestValueDefectsShowInGoogle(t *testing.T) {
	tests := []struct {
		file, contentType string
		want              []string
	}{
		// 24.1: a server's default ISO-8859-1 label on a UTF-8 feed does
		// not turn its Japanese into mojibake; Latin-1 stays Latin-1.
		{"broken-utf8.ics", "text/calendar; charset=ISO-8859-1", []string{"2026-12-10..2026-12-12 \"2026年日本国際\uFFFD?\uFFFD覧会\""}},
		{"broken-utf8.ics", "text/calendar; charset=utf-8", []string{"2026-12-10..2026-12-12 \"2026年日本国際\uFFFD?\uFFFD覧会\""}},
		{"windows-1252.ics", "text/calendar; charset=ISO-8859-1", []string{`2026-12-06..2026-12-07 "Día de la Constitución"`}},
		{"windows-1252.ics", "text/calendar; charset=windows-1252", []string{`2026-12-06..2026-12-07 "Día de la Constitución"`}},
	}
	for _, tt := range tests {
		t.Run(tt.file+" as "+tt.contentType, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(filepath.Join(defectsDir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			m := newMirror(t)
			m.mu.Lock()
			m.contentType = tt.contentType
			m.mu.Unlock()
			m.setFeed(body)
			m.syncOK("first sync")
			if got := shownBy(m.fake, m.lo, m.hi); !slices.Equal(got, tt.want) {
				t.Errorf("Google shows:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
			if _, writes := m.syncOK("second sync"); writes != 0 {
				t.Errorf("an unchanged feed cost %d writes", writes)
			}
		})
	}
}
