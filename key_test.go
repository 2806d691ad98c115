package calsyncd_test

import (
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
)

func TestKeyKinds(t *testing.T) {
	master := calsyncd.Key{UID: "u"}
	split := calsyncd.SplitKey("u", "20270111T080000Z")
	tests := []struct {
		key    calsyncd.Key
		kind   calsyncd.Kind
		parent string
		start  string
	}{
		{master, calsyncd.Top, "", ""},
		{calsyncd.InstanceKey(master, "20270118T080000Z"), calsyncd.Instance, "u", "20270118T080000Z"},
		{split, calsyncd.Split, "", "20270111T080000Z"},
		{calsyncd.InstanceKey(split, "20270125T090000Z"), calsyncd.Instance, "u@20270111T080000Z/series", "20270125T090000Z"},
		{calsyncd.StandaloneKey("u", "20270106"), calsyncd.Standalone, "", "20270106"},
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
