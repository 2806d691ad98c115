package mapping_test

import (
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/mapping"
)

func TestEventIDIsDeterministicValidAndDistinct(t *testing.T) {
	keys := []struct {
		sub string
		key calsyncd.Key
		gen int
	}{
		{"team", calsyncd.Key{UID: "a@example.com"}, 0},
		{"team", calsyncd.Key{UID: "a@example.com"}, 1},
		{"team", calsyncd.Key{UID: "a@example.com", RecurrenceID: "20270105T090000Z"}, 0},
		{"other", calsyncd.Key{UID: "a@example.com"}, 0},
		// Field boundaries must not blur: ("ab","") vs ("a","b").
		{"team", calsyncd.Key{UID: "ab"}, 0},
		{"team", calsyncd.Key{UID: "a", RecurrenceID: "b"}, 0},
	}
	seen := map[string]int{}
	for i, k := range keys {
		id := mapping.EventID("", k.sub, k.key, k.gen)
		if id != mapping.EventID("", k.sub, k.key, k.gen) {
			t.Fatalf("EventID not deterministic for %+v", k)
		}
		if !validEventID(id) {
			t.Errorf("EventID %q is not a valid Google id", id)
		}
		if j, dup := seen[id]; dup {
			t.Errorf("keys %d and %d share id %s", i, j, id)
		}
		seen[id] = i
	}
}

func TestValidEventID(t *testing.T) {
	for id, want := range map[string]bool{
		"abcde": true, "0123456789abcdefghijklmnopqrstuv": true,
		"abcd": false, "abcdw": false, "ABCDE": false, "abc-de": false, "": false,
	} {
		if got := validEventID(id); got != want {
			t.Errorf("ValidEventID(%q) = %v, want %v", id, got, want)
		}
	}
}

// validEventID reports whether id is acceptable to Google as a client id:
// 5 to 1024 characters of base32hex (0-9, a-v).
func validEventID(id string) bool {
	if len(id) < 5 || len(id) > 1024 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'v') {
			return false
		}
	}
	return true
}
