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
	err := s.writeRow(ctx, `INSERT INTO runs (subscription_id, started_at) VALUES (?, ?) RETURNING id`,
		subscriptionID, ms(started)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store: start run of %s: %w", subscriptionID, err)
	}
	return id, nil
}

// UnfinishedRun reports whether a run of the subscription started at or
// after since, before the run numbered before, never finished: its process
// died (or was abandoned at shutdown) between Google's answers and their
// commit, so Google may hold events of ours the mappings lack.
func (s *Store) UnfinishedRun(ctx context.Context, subscriptionID string, since time.Time, before int64) (bool, error) {
	var n int
	err := s.queryRow(ctx, `SELECT COUNT(*) FROM runs WHERE subscription_id = ? AND id < ? AND started_at >= ? AND finished_at = 0`,
		subscriptionID, before, ms(since)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: unfinished runs of %s: %w", subscriptionID, err)
	}
	return n > 0, nil
}

// FinishRun records a run's outcome and counts.
func (s *Store) FinishRun(ctx context.Context, r calsyncd.Run) error {
	_, err := s.exec(ctx, `UPDATE runs SET finished_at = ?, outcome = ?, created = ?, updated = ?, deleted = ?,
		unchanged = ?, deferred = ?, failed = ?, rejected = ?, held_deletes = ?, filtered = ?, repaired = ?,
		error_class = ?, error = ? WHERE id = ?`,
		ms(r.FinishedAt), string(r.Outcome), r.Created, r.Updated, r.Deleted, r.Unchanged, r.Deferred, r.Failed,
		r.Rejected, r.HeldDeletes, r.Filtered, r.Repaired, string(r.ErrorClass), r.Error, r.ID)
	if err != nil {
		return fmt.Errorf("store: finish run %d: %w", r.ID, err)
	}
	return nil
}

// Runs returns a subscription's most recent runs, newest first.
func (s *Store) Runs(ctx context.Context, subscriptionID string, limit int) ([]calsyncd.Run, error) {
	rows, err := s.query(ctx, `SELECT id, subscription_id, started_at, finished_at, outcome, created, updated, deleted,
		unchanged, deferred, failed, rejected, held_deletes, filtered, repaired, error_class, error
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
			&r.Deleted, &r.Unchanged, &r.Deferred, &r.Failed, &r.Rejected, &r.HeldDeletes, &r.Filtered, &r.Repaired, &r.ErrorClass, &r.Error); err != nil {
			return nil, fmt.Errorf("store: list runs of %s: %w", subscriptionID, err)
		}
		r.StartedAt, r.FinishedAt = fromMS(started), fromMS(finished)
		out = append(out, r)
	}
	return out, rows.Err()
}

// pruneChunk is how many runs one delete removes: a short transaction,
// so the writes of running passes never wait long behind a prune.
const pruneChunk = 500

// PruneRuns deletes the history of runs beyond the retention: runs that
// started more than maxAge ago (0: no age limit) and runs beyond each
// subscription's maxRuns newest (0: no count limit). A subscription's
// newest run and its newest successful one (which the metrics read) are
// always kept. It returns how many runs it deleted.
func (s *Store) PruneRuns(ctx context.Context, maxAge time.Duration, maxRuns int) (int, error) {
	if maxAge <= 0 && maxRuns <= 0 {
		return 0, nil
	}
	type kept struct {
		id              string
		newest, success int64
		count           int
		oldest          int64 // the earliest started_at
	}
	rows, err := s.query(ctx, `SELECT subscription_id, MAX(id), COUNT(*),
		COALESCE(MAX(CASE WHEN outcome IN (?, ?, ?) THEN id END), 0), MIN(started_at) FROM runs GROUP BY subscription_id`,
		string(calsyncd.OutcomeOK), string(calsyncd.OutcomePartial), string(calsyncd.OutcomeNotModified))
	if err != nil {
		return 0, fmt.Errorf("store: prune runs: %w", err)
	}
	var subs []kept
	for rows.Next() {
		var k kept
		if err := rows.Scan(&k.id, &k.newest, &k.count, &k.success, &k.oldest); err != nil {
			rows.Close()
			return 0, fmt.Errorf("store: prune runs: %w", err)
		}
		subs = append(subs, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("store: prune runs: %w", err)
	}
	var ageCutoff int64 // started before it: too old (0: none is)
	if maxAge > 0 {
		ageCutoff = ms(s.Now().Add(-maxAge))
	}
	deleted := 0
	for _, k := range subs {
		var countCutoff int64 // ids below it are beyond maxRuns (0: none is)
		if maxRuns > 0 && k.count > maxRuns {
			if err := s.queryRow(ctx, `SELECT id FROM runs WHERE subscription_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?`,
				k.id, maxRuns-1).Scan(&countCutoff); err != nil {
				return deleted, fmt.Errorf("store: prune runs of %s: %w", k.id, err)
			}
		}
		// Nothing beyond maxRuns and nothing older than maxAge: no delete
		// to ask for (a delete of nothing per subscription, hourly, is
		// seconds of CPU at 100,000 on the connection runs write through).
		if countCutoff == 0 && (ageCutoff == 0 || k.oldest >= ageCutoff) {
			continue
		}
		for {
			res, err := s.exec(ctx, `DELETE FROM runs WHERE id IN (SELECT id FROM runs
				WHERE subscription_id = ? AND id < ? AND id <> ? AND (id < ? OR started_at < ?) ORDER BY id LIMIT ?)`,
				k.id, k.newest, k.success, countCutoff, ageCutoff, pruneChunk)
			if err != nil {
				return deleted, fmt.Errorf("store: prune runs of %s: %w", k.id, err)
			}
			n, _ := res.RowsAffected()
			deleted += int(n)
			if n < pruneChunk {
				break
			}
		}
	}
	return deleted, nil
}
