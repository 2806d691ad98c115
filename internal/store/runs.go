package store

import (
	"context"
	"fmt"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// StartRun records that a run began and returns its id.
func (s *Store) StartRun(ctx context.Context, subscriptionID string, started time.Time) (int64, error) {
	var id int64
	err := s.queryRow(ctx, `INSERT INTO runs (subscription_id, started_at) VALUES (?, ?) RETURNING id`,
		subscriptionID, ms(started)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store: start run of %s: %w", subscriptionID, err)
	}
	return id, nil
}

// FinishRun records a run's outcome and counts.
func (s *Store) FinishRun(ctx context.Context, r calsyncd.Run) error {
	_, err := s.exec(ctx, `UPDATE runs SET finished_at = ?, outcome = ?, created = ?, updated = ?, deleted = ?,
		unchanged = ?, deferred = ?, failed = ?, rejected = ?, held_deletes = ?, filtered = ?, error_class = ?, error = ?
		WHERE id = ?`,
		ms(r.FinishedAt), string(r.Outcome), r.Created, r.Updated, r.Deleted, r.Unchanged, r.Deferred, r.Failed,
		r.Rejected, r.HeldDeletes, r.Filtered, string(r.ErrorClass), r.Error, r.ID)
	if err != nil {
		return fmt.Errorf("store: finish run %d: %w", r.ID, err)
	}
	return nil
}

// Runs returns a subscription's most recent runs, newest first.
func (s *Store) Runs(ctx context.Context, subscriptionID string, limit int) ([]calsyncd.Run, error) {
	rows, err := s.query(ctx, `SELECT id, subscription_id, started_at, finished_at, outcome, created, updated, deleted,
		unchanged, deferred, failed, rejected, held_deletes, filtered, error_class, error
		FROM runs WHERE subscription_id = ? ORDER BY id DESC LIMIT ?`, subscriptionID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list runs of %s: %w", subscriptionID, err)
	}
	defer rows.Close()
	var out []calsyncd.Run
	for rows.Next() {
		var (
			r                 calsyncd.Run
			started, finished int64
		)
		if err := rows.Scan(&r.ID, &r.SubscriptionID, &started, &finished, &r.Outcome, &r.Created, &r.Updated,
			&r.Deleted, &r.Unchanged, &r.Deferred, &r.Failed, &r.Rejected, &r.HeldDeletes, &r.Filtered, &r.ErrorClass, &r.Error); err != nil {
			return nil, fmt.Errorf("store: list runs of %s: %w", subscriptionID, err)
		}
		r.StartedAt, r.FinishedAt = fromMS(started), fromMS(finished)
		out = append(out, r)
	}
	return out, rows.Err()
}
