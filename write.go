package calsyncd

import (
	"context"
	"time"
)

// Persister records the outcome of each write the moment it succeeds, so a
// crash or abort forgets nothing that Google has. The writer calls it; the
// pass implements it over the store. A batch writes from several
// goroutines: a Persister must be safe for concurrent use.
type Persister interface {
	Saved(ctx context.Context, m Mapping) error
	Deleted(ctx context.Context, k Key) error
	Rejected(ctx context.Context, r Rejection) error
}

// WriteResult counts what a writer did with a batch. Every op lands in
// exactly one of Created, Updated, Deleted, Forgotten, Deferred, Failed,
// Rejected, Unparented and Skipped.
type WriteResult struct {
	// Created counts creates done, including events of ours found in
	// Google and adopted (Adopted) or brought back from the bin (Restored),
	// and updates that had to recreate a vanished event.
	Created  int
	Updated  int
	Deleted  int
	Restored int // cancelled events of ours brought back
	Adopted  int // events of ours found in Google without a mapping
	// Deferred writes were not done because Google rate- or usage-limited
	// the account; they are picked up by the next run. A deferred create
	// has no Google id; a deferred delete keeps its mapping.
	Deferred int
	// Failed writes hit transient errors beyond their retries (or an auth
	// failure, which also sets Err).
	Failed int
	// Rejected writes were refused by Google for their content.
	Rejected int
	// Skipped writes were not attempted because the batch stopped (an auth
	// failure, a missing calendar, shutdown).
	Skipped int
	// Forgotten are instance exceptions whose mapping was dropped without
	// a request: their series went (taking them along) or no longer has
	// their occurrence.
	Forgotten int
	// Unparented are instance exceptions not written because Google
	// refused their series in this batch (RefusedSeries); the caller may
	// shape the series differently and plan again.
	Unparented int
	// RefusedSeries are the recurring events Google refused in this batch.
	RefusedSeries []Key
	// RecreatedSeries are recurring events written under a new id (the
	// old one was gone for good): their exceptions were left behind with
	// the old event and must be written again.
	RecreatedSeries []Key
	// Retries counts requests sent again; Waited is the time writes spent
	// backing off before them, and Paced the time they queued for the
	// account's pacer.
	Retries int
	Waited  time.Duration
	Paced   time.Duration
	// ByClass counts Google's error answers by class, including those that
	// were retried successfully.
	ByClass map[ErrorClass]int
	// Mapped, Unmapped and Rejections are what the batch recorded through
	// its Persister, in the order it did: the mappings saved, the keys
	// whose mapping went, the events Google refused. A caller keeps its
	// own view of the store in step with them instead of reading it again.
	Mapped     []Mapping
	Unmapped   []Key
	Rejections []Rejection
	// Backfill reports whether the batch ran as a backfill.
	Backfill bool
	// ThrottleUntil is when the account's throttle window closes, if the
	// batch ended with one open; ThrottleClass is why it opened
	// (ClassRateLimited or ClassUsageLimited).
	ThrottleUntil time.Time
	ThrottleClass ErrorClass
	// Err stops the whole subscription for this run: auth failures, a
	// missing calendar, a store that cannot record writes. Rate limits
	// never set it.
	Err error
}

// Writes is the number of successful writes.
func (r *WriteResult) Writes() int { return r.Created + r.Updated + r.Deleted }

// Add is the result of r followed by next, another batch of the same run:
// the counts add up, the lists join, the later throttle window stands and
// the first error is kept.
func (r WriteResult) Add(next WriteResult) WriteResult {
	r.Created += next.Created
	r.Updated += next.Updated
	r.Deleted += next.Deleted
	r.Restored += next.Restored
	r.Adopted += next.Adopted
	r.Deferred += next.Deferred
	r.Failed += next.Failed
	r.Rejected += next.Rejected
	r.Skipped += next.Skipped
	r.Forgotten += next.Forgotten
	r.Unparented += next.Unparented
	r.Retries += next.Retries
	r.Waited += next.Waited
	r.Paced += next.Paced
	if len(next.ByClass) > 0 {
		byClass := make(map[ErrorClass]int, len(r.ByClass)+len(next.ByClass))
		for c, n := range r.ByClass {
			byClass[c] = n
		}
		for c, n := range next.ByClass {
			byClass[c] += n
		}
		r.ByClass = byClass
	}
	r.RefusedSeries = append(r.RefusedSeries[:len(r.RefusedSeries):len(r.RefusedSeries)], next.RefusedSeries...)
	r.RecreatedSeries = append(r.RecreatedSeries[:len(r.RecreatedSeries):len(r.RecreatedSeries)], next.RecreatedSeries...)
	r.Mapped = append(r.Mapped[:len(r.Mapped):len(r.Mapped)], next.Mapped...)
	r.Unmapped = append(r.Unmapped[:len(r.Unmapped):len(r.Unmapped)], next.Unmapped...)
	r.Rejections = append(r.Rejections[:len(r.Rejections):len(r.Rejections)], next.Rejections...)
	r.Backfill = r.Backfill || next.Backfill
	r.ThrottleUntil, r.ThrottleClass = next.ThrottleUntil, next.ThrottleClass
	if r.Err == nil {
		r.Err = next.Err
	}
	return r
}

// Reshaped takes back what r counted for the series Google refused and
// their exceptions left unwritten (RefusedSeries, Unparented): the caller
// shapes those series again and writes them in a next batch of the same
// run, whose result it adds, so they are outcomes of that batch instead.
// The refusals stay in Rejections: they must be remembered.
func (r WriteResult) Reshaped() WriteResult {
	r.Rejected -= len(r.RefusedSeries)
	r.Unparented = 0
	return r
}
