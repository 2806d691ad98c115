package calsyncd

import (
	"errors"
	"time"
)

// AccountState is the throttle memory of one Google account: the window
// during which writes are deferred without asking Google, and the pacer
// spacing learned from rate limits. It survives restarts.
type AccountState struct {
	Name          string
	ThrottleUntil time.Time
	// ThrottleClass is why the window opened: ClassRateLimited or
	// ClassUsageLimited.
	ThrottleClass ErrorClass
	ThrottleLevel int // consecutive windows opened; drives the doubling
	Spacing       time.Duration
	UpdatedAt     time.Time
}

// Lease is a replica's claim on one Google account's work: while it holds
// the lease, only it syncs the account's subscriptions, so one pacer spends
// the account's quota. A lease is held while now is before ExpiresAt.
type Lease struct {
	Account   string
	Owner     string
	ExpiresAt time.Time
}

// HeldAt reports whether the lease is still in force at t.
func (l Lease) HeldAt(t time.Time) bool { return l.Owner != "" && t.Before(l.ExpiresAt) }

// ErrLeaseLost is returned when a replica extends or releases a lease it no
// longer holds: it expired, or another replica took it. The replica must
// stop writing for that account at once.
var ErrLeaseLost = errors.New("store: lease lost")
