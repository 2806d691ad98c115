package calsyncd

import "time"

// Outcome is how a run ended.
type Outcome string

// Run outcomes.
const (
	// OutcomeRunning: the run has started and not yet finished.
	OutcomeRunning Outcome = "running"
	// OutcomeOK: everything the feed asked for is in Google.
	OutcomeOK Outcome = "ok"
	// OutcomeNotModified: the feed is as it was after the last complete
	// run; nothing to write.
	OutcomeNotModified Outcome = "not_modified"
	// OutcomeDeferred: Google (or the feed server) asked us to wait, or
	// shutdown interrupted the run; the next run picks up the rest. It is
	// no failure.
	OutcomeDeferred Outcome = "deferred"
	// OutcomePartial: some events failed or were rejected; the rest are in.
	OutcomePartial Outcome = "partial"
	// OutcomeFailed: the run could not do its work; it counts toward ERROR.
	OutcomeFailed Outcome = "failed"
)

// Run is one sync of one subscription.
type Run struct {
	ID             int64
	SubscriptionID string
	StartedAt      time.Time
	FinishedAt     time.Time
	Outcome        Outcome
	Created        int
	Updated        int
	Deleted        int
	Unchanged      int
	Deferred       int
	Failed         int
	Rejected       int
	HeldDeletes    int
	ErrorClass     ErrorClass
	Error          string
	// Filtered counts the feed's events the subscription's filters
	// excluded.
	Filtered int
	// Repaired counts the owned events a reconcile found edited by hand in
	// Google (a field we write: title, time, place, description, ...) and
	// wrote back to the feed's version.
	Repaired int
}

// RunChangeKind is what a run did to one event in Google.
type RunChangeKind string

// The kinds of RunChange.
const (
	RunCreated RunChangeKind = "created"
	RunUpdated RunChangeKind = "updated"
	RunDeleted RunChangeKind = "deleted"
)

// MaxRunChanges is how many of a run's changes the store keeps (its
// counts, in Run, are whole): enough to answer "what did the last sync do
// to my calendar" without the history of a backfill filling the database.
const MaxRunChanges = 50

// RunChange is one write of a run Google accepted: the event's key, its
// title and start as written (a delete's as last written, when known).
type RunChange struct {
	Kind   RunChangeKind
	Key    Key
	Title  string
	Start  time.Time
	AllDay bool
}
