package calsyncd

import "time"

// Mapping is what we remember about one feed event we wrote to Google.
type Mapping struct {
	Key Key
	// EventID is the Google event id (ours for masters and single events;
	// Google's instance id for overridden instances).
	EventID string
	// Generation is bumped when Google refuses to let us reuse an id (the
	// person emptied the bin after deleting our event).
	Generation int
	// Hash is the content hash of the feed event as last written.
	Hash string
	// ETag is the Google etag of the event as we last wrote it; updates send
	// it as If-Match so a person's edits are noticed.
	ETag string
	// EndsAt is when the event ends (zero for a recurring series or when
	// unknown): an event that ended before the window and then left the
	// feed is history, not a deletion.
	EndsAt time.Time
	// Fields is a digest of each field Google shows of the event as last
	// written ("" when unknown), so a dry-run can say which fields an
	// update changes.
	Fields    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Rejection is a feed event Google refused (HTTP 400 and the like). It is not
// retried until its content changes.
type Rejection struct {
	Key    Key
	Hash   string
	Reason string
	At     time.Time
}
