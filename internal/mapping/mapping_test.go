package mapping_test

import (
	"testing"

	"github.com/calsyncd/calsyncd/internal/mapping"
)

func TestEventIDIsDeterministicValidAndDistinct(t *testing.T) {
	keys := []struct {
		sub string
		key mapping.Key
		gen int
	}{
		{"team", mapping.Key{UID: "a@example.com"}, 0},
		{"team", mapping.Key{UID: "a@example.com"}, 1},
		{"team", mapping.Key{UID: "a@example.com", RecurrenceID: "20270105T090000Z"}, 0},
		{"other", mapping.Key{UID: "a@example.com"}, 0},
		// Field boundaries must not blur: ("ab","") vs ("a","b").
		{"team", mapping.Key{UID: "ab"}, 0},
		{"team", mapping.Key{UID: "a", RecurrenceID: "b"}, 0},
	}
	seen := map[string]int{}
	for i, k := range keys {
		id := mapping.EventID(k.sub, k.key, k.gen)
		if id != mapping.EventID(k.sub, k.key, k.gen) {
			t.Fatalf("EventID not deterministic for %+v", k)
		}
		if !mapping.ValidEventID(id) {
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
		if got := mapping.ValidEventID(id); got != want {
			t.Errorf("ValidEventID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestKeyKinds(t *testing.T) {
	master := mapping.Key{UID: "u"}
	split := mapping.SplitKey("u", "20270111T080000Z")
	tests := []struct {
		key    mapping.Key
		kind   mapping.Kind
		parent string
		start  string
	}{
		{master, mapping.Top, "", ""},
		{mapping.InstanceKey(master, "20270118T080000Z"), mapping.Instance, "u", "20270118T080000Z"},
		{split, mapping.Split, "", "20270111T080000Z"},
		{mapping.InstanceKey(split, "20270125T090000Z"), mapping.Instance, "u@20270111T080000Z/series", "20270125T090000Z"},
		{mapping.StandaloneKey("u", "20270106"), mapping.Standalone, "", "20270106"},
	}
	for _, tt := range tests {
		if got := tt.key.Kind(); got != tt.kind {
			t.Errorf("%s: kind %d, want %d", tt.key, got, tt.kind)
		}
		p, ok := tt.key.Parent()
		if ok != (tt.parent != "") || (ok && p.String() != tt.parent) {
			t.Errorf("%s: parent %s %v, want %q", tt.key, p, ok, tt.parent)
		}
		if got := tt.key.Start(); got != tt.start {
			t.Errorf("%s: start %q, want %q", tt.key, got, tt.start)
		}
	}
}
