package calsyncd

import "time"

// State is where a subscription stands in its state machine.
type State string

// Subscription states: ACTIVE until error_threshold runs in a row fail,
// then ERROR until the next clean run.
const (
	StateActive State = "ACTIVE"
	StateError  State = "ERROR"
)

// SubscriptionState is what the daemon remembers about one subscription
// between runs.
type SubscriptionState struct {
	ID                string
	Calendar          string
	Account           string
	State             State
	ConsecutiveErrors int
	LastErrorClass    ErrorClass
	LastError         string
	// Feed validators, stored only after a run that left nothing behind.
	ETag         string
	LastModified string
	BodyHash     string
	// RenderPolicy is the fingerprint of the render policy, and of how the
	// feed is read (time zone, identity, window), that the validators were
	// stored under: under another the feed is read in full, unchanged or
	// not.
	RenderPolicy string
	// Filtered is how many of the feed's events the filters excluded the
	// last time a run read the feed.
	Filtered int
	// FetchNotBefore is when the feed server asked us to come back
	// (Retry-After on a 429 or 503).
	FetchNotBefore time.Time
	// GuardRuns counts consecutive runs whose deletes the mass-delete guard
	// held; HeldDeletes is how many it held last time. GuardHeld names the
	// held deletes (a digest: a run asking for others starts the count
	// again), GuardBase is how many events were mapped when the hold
	// began (the held deletes are weighed against it, not against a count
	// the hold's own creates inflated), and GuardByConfig says they follow
	// a change of the configuration, which waiting never confirms.
	GuardRuns     int
	HeldDeletes   int
	GuardHeld     string
	GuardBase     int
	GuardByConfig bool
	// GuardPeak is the high-water mark of events mapped within the window
	// over the guard's recent period, last reached at GuardPeakAt: the
	// guard weighs a shrinking feed against it, not only against the last
	// run.
	GuardPeak   int
	GuardPeakAt time.Time
	// RereadAt is when the feed must be read in full again, unchanged or
	// not (zero: never): the window moves with time, and the last render
	// left out occurrences beyond its end that only a new render writes
	// (an event past it, the RDATEs of a second RRULE, a series written as
	// single events).
	RereadAt        time.Time
	LastReconcileAt time.Time
	// Vacating are calendars the subscription moved away from (its
	// calendar or account changed) that still hold events it wrote; they
	// are deleted once the new calendar holds the feed.
	Vacating []Location
	// FeedThrottledSince is when the feed server began answering every
	// fetch with 429 (zero: it does not).
	FeedThrottledSince time.Time
	NextRunAt          time.Time
	// Notes are standing remarks shown in status (e.g. "2 recurring events
	// expanded into single events").
	Notes     []string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Location is where a subscription's events live: a Google calendar, as
// written by one of the configured accounts.
type Location struct {
	Calendar string `json:"calendar"`
	Account  string `json:"account"`
}

// SubscriptionCounts are totals over every subscription the database
// knows: how many, how many in each state, how many failing (in ERROR, or
// whose last run failed) and how many with deletes held by the guard.
type SubscriptionCounts struct {
	Total          int
	States         map[State]int
	Failing        int
	HoldingDeletes int
}
