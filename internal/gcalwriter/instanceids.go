package gcalwriter

import (
	"sync"
	"time"
)

// What a Writer learns of its account's Google, where the documentation
// is silent, is kept for learntFor and then tried again: a wrong belief
// costs a request per override for a day at most, not for ever.
const learntFor = 24 * time.Hour

// instanceIDs is what a Writer learnt of how Google names and finds the
// instances of its account's series, for all-day and timed series apart
// (index 1 and 0).
type instanceIDs struct {
	mu sync.Mutex
	// derived: a get or a lookup showed that the derived id names the
	// instance at its original start.
	derived [2]bool
	// seriesETag: a plain instance read by its derived id carried its
	// series' etag, so If-Match: the series' etag holds on plain instances.
	seriesETag [2]bool
	// opaqueUntil: a derived id did not lead to the instance a lookup
	// found under another id; derived ids are not tried before then.
	opaqueUntil [2]time.Time
	// filterFailedUntil: events.instances' originalStart did not find an
	// instance a time window found (Google ignores or rejects that form);
	// the window is used at once before then.
	filterFailedUntil [2]time.Time
}

func kindIndex(allDay bool) int {
	if allDay {
		return 1
	}
	return 0
}

// state: trusted when derived ids are known to name their instance,
// usable unless they are known not to.
func (s *instanceIDs) state(allDay bool, now time.Time) (trusted, usable bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := kindIndex(allDay)
	if now.Before(s.opaqueUntil[i]) {
		return false, false
	}
	return s.derived[i], true
}

// learn records whether an instance was found under its derived id.
func (s *instanceIDs) learn(allDay, derived bool, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := kindIndex(allDay)
	s.derived[i] = derived
	if derived {
		s.opaqueUntil[i] = time.Time{}
	} else {
		s.opaqueUntil[i] = now.Add(learntFor)
	}
}

// distrust forgets that derived ids can be written blind: an answer named
// another instance.
func (s *instanceIDs) distrust(allDay bool, now time.Time) { s.learn(allDay, false, now) }

func (s *instanceIDs) filterWorks(allDay bool, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !now.Before(s.filterFailedUntil[kindIndex(allDay)])
}

func (s *instanceIDs) filterFailed(allDay bool, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.filterFailedUntil[kindIndex(allDay)] = now.Add(learntFor)
}

func (s *instanceIDs) plainCarriesSeriesETag(allDay bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seriesETag[kindIndex(allDay)] = true
}

func (s *instanceIDs) seriesETagHolds(allDay bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seriesETag[kindIndex(allDay)]
}
