package diff

// Batch is a plan addressed to one subscription's calendar: what a writer
// applies.
type Batch struct {
	SubscriptionID string
	CalendarID     string
	Ops            []Op
	// Backfill marks a subscription's first sync: its writes yield to
	// incremental ones and hold at most the writer's backfill share of
	// the account's slots. A plan larger than the writer's backfill
	// threshold is a backfill whether or not this is set.
	Backfill bool
	// Drain, when closed, stops the batch from starting new writes; writes
	// already sent finish and are persisted (graceful shutdown). What is
	// left is Skipped.
	Drain <-chan struct{}
}
