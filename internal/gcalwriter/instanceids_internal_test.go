package gcalwriter

import (
	"testing"
	"time"
)

// What a writer learns of instance ids and of originalStart's date form
// holds for learntFor, per kind of series, and is tried again after.
func TestInstanceIDsAreLearntForADay(t *testing.T) {
	now := time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC)
	var s instanceIDs
	if trusted, usable := s.state(true, now); trusted || !usable {
		t.Fatalf("unknown: trusted %v usable %v", trusted, usable)
	}
	s.learn(true, true, now)
	if trusted, _ := s.state(true, now); !trusted {
		t.Error("derived ids seen, not trusted")
	}
	if trusted, _ := s.state(false, now); trusted {
		t.Error("all-day evidence trusted for timed series")
	}
	s.learn(true, false, now)
	if _, usable := s.state(true, now.Add(learntFor-time.Second)); usable {
		t.Error("opaque ids tried again within the day")
	}
	if trusted, usable := s.state(true, now.Add(learntFor)); trusted || !usable {
		t.Errorf("a day later: trusted %v usable %v, want tried again, read first", trusted, usable)
	}
	s.filterFailed(true, now)
	if s.filterWorks(true, now.Add(time.Hour)) || !s.filterWorks(false, now) || !s.filterWorks(true, now.Add(learntFor)) {
		t.Error("originalStart's failure is not kept per kind for a day")
	}
}
