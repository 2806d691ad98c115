package diff_test

import (
	"fmt"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
)

func TestDetectUnstableUIDs(t *testing.T) {
	events := func(prefix string, n int) []feed.Event {
		var out []feed.Event
		for i := range n {
			out = append(out, feed.Event{UID: fmt.Sprintf("%s-%d", prefix, i), Hash: fmt.Sprintf("h%d", i)})
		}
		return out
	}
	mapped := func(evs []feed.Event) []calsyncd.Mapping {
		var out []calsyncd.Mapping
		for _, ev := range evs {
			out = append(out, calsyncd.Mapping{Key: ev.Key(), Hash: ev.Hash})
		}
		return out
	}
	renamed := func(evs []feed.Event, n int) []feed.Event {
		out := append([]feed.Event(nil), evs...)
		for i := range n {
			out[i].UID = "fresh-" + out[i].UID
		}
		return out
	}
	edited := func(evs []feed.Event, n int) []feed.Event {
		out := append([]feed.Event(nil), evs...)
		for i := range n {
			out[i].UID = "fresh-" + out[i].UID
			out[i].Hash = "edited-" + out[i].Hash
		}
		return out
	}
	before := events("outlook", 10)
	tests := map[string]struct {
		desired  []feed.Event
		mapped   []calsyncd.Mapping
		unstable bool
		new      int
		twins    int
	}{
		"same feed":                   {desired: before, mapped: mapped(before)},
		"every UID new, same content": {desired: renamed(before, 10), mapped: mapped(before), unstable: true, new: 10, twins: 10},
		"most UIDs new, same content": {desired: renamed(before, 8), mapped: mapped(before), unstable: true, new: 8, twins: 8},
		"half new is not most":        {desired: renamed(before, 5), mapped: mapped(before), new: 5, twins: 5},
		"new UIDs with new content":   {desired: edited(before, 10), mapped: mapped(before), new: 10},
		"first sync":                  {desired: before, mapped: nil},
		"a replaced feed":             {desired: events("other", 10), mapped: mapped(before), new: 10, twins: 10, unstable: true},
		"too small to tell":           {desired: renamed(before[:2], 2), mapped: mapped(before[:2])},
		"new UIDs, a few edits too":   {desired: edited(renamed(before, 10), 1), mapped: mapped(before), unstable: true, new: 10, twins: 9},
		"new UIDs, many edits":        {desired: edited(renamed(before, 10), 3), mapped: mapped(before), new: 10, twins: 7},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := diff.DetectUnstableUIDs(tt.desired, tt.mapped)
			if got.Unstable != tt.unstable || got.New != tt.new || got.Twins != tt.twins {
				t.Errorf("got %+v, want unstable=%v new=%d twins=%d", got, tt.unstable, tt.new, tt.twins)
			}
		})
	}
}
