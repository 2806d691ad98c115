// Package preview presents a dry-run: each subscription's preview
// (subscription.Preview) with the advice for its failures, as text for a
// person and as JSON for a program (the schema is in docs/operations.md).
// It writes nothing but the report.
package preview

import (
	"fmt"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// Advice is what is wrong with a failure and what to do about it, in the
// words `calsyncd check` uses.
type Advice struct{ What, Do string }

// String is the advice as check prints a problem: "what → do".
func (a Advice) String() string {
	if a.Do == "" {
		return a.What
	}
	return a.What + " → " + a.Do
}

// Advised is one subscription's preview with the advice for each failure
// in it.
type Advised struct {
	subscription.Preview
	// ErrAdvice is Err's; ReconcileAdvice ReconcileSkipped's; VacateAdvice
	// each Vacate's error's (by index).
	ErrAdvice, ReconcileAdvice Advice
	VacateAdvice               map[int]Advice
}

// plural is n and the word for it: "1 date", "2 dates".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// inZone is a start in the event's zone (UTC when it has none or the zone
// is unknown).
func inZone(t feed.Time) time.Time {
	if t.Zone != "" {
		if loc, err := time.LoadLocation(t.Zone); err == nil {
			return t.T.In(loc)
		}
	}
	return t.T.UTC()
}
