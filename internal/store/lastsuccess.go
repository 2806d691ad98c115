package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// LastSuccess is when the subscription's last successful run finished: one
// that ended ok, partial or not_modified (the outcomes that return it to
// ACTIVE). The zero time means it never had one. The metrics read it at
// every scrape.
func (s *Store) LastSuccess(ctx context.Context, subscriptionID string) (time.Time, error) {
	var last int64
	// Newest first along the index: usually the first row read is the one.
	err := s.queryRow(ctx, `SELECT finished_at FROM runs
		WHERE subscription_id = ? AND outcome IN (?, ?, ?) ORDER BY id DESC LIMIT 1`,
		subscriptionID, string(calsyncd.OutcomeOK), string(calsyncd.OutcomePartial), string(calsyncd.OutcomeNotModified)).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("store: last successful run of %s: %w", subscriptionID, err)
	}
	return fromMS(last), nil
}
