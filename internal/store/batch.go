package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// The batch reads: a page of the status (and a scrape of the metrics)
// costs a few queries whatever the number of subscriptions, never a few
// per subscription. Subscriptions are ordered by id, bytewise on both
// drivers (PostgreSQL's key columns are COLLATE "C").

// idChunk is how many ids one query names: SQLite allows 32,766 bound
// variables, older builds 999; 1,000 keeps every query well within both
// (the run-history query binds one more).
const idChunk = 1000

// SubscriptionIDs lists the id of every subscription the database knows,
// in order.
func (s *Store) SubscriptionIDs(ctx context.Context) ([]string, error) {
	rows, err := s.query(ctx, `SELECT id FROM subscriptions ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: list subscription ids: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: list subscription ids: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list subscription ids: %w", err)
	}
	return out, nil
}

// SubscriptionsAfter is the first limit subscriptions whose id comes after
// after ("": from the first), in order.
func (s *Store) SubscriptionsAfter(ctx context.Context, after string, limit int) ([]calsyncd.SubscriptionState, error) {
	out, err := s.subscriptionsWhere(ctx, `WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list subscriptions after %q: %w", after, err)
	}
	return out, nil
}

// SubscriptionsBefore is the last limit subscriptions whose id comes
// before before, in order.
func (s *Store) SubscriptionsBefore(ctx context.Context, before string, limit int) ([]calsyncd.SubscriptionState, error) {
	out, err := s.subscriptionsWhere(ctx, `WHERE id < ? ORDER BY id DESC LIMIT ?`, before, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list subscriptions before %q: %w", before, err)
	}
	slices.Reverse(out)
	return out, nil
}

func (s *Store) subscriptionsWhere(ctx context.Context, where string, args ...any) ([]calsyncd.SubscriptionState, error) {
	rows, err := s.query(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []calsyncd.SubscriptionState{}
	for rows.Next() {
		st, err := scanSubscription(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// SubscriptionCounts counts every subscription the database knows, by
// state; failing are those in ERROR or whose newest run failed. Only a
// subscription with consecutive errors can have a failed newest run (a
// failed run counts one, a clean run resets them), so only those cost a
// look at their runs.
func (s *Store) SubscriptionCounts(ctx context.Context) (calsyncd.SubscriptionCounts, error) {
	c := calsyncd.SubscriptionCounts{States: map[calsyncd.State]int{}}
	rows, err := s.query(ctx, `SELECT state, COUNT(*),
		COALESCE(SUM(CASE WHEN held_deletes > 0 THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN state = ? THEN 1 WHEN consecutive_errors = 0 THEN 0
			WHEN (SELECT outcome FROM runs WHERE runs.subscription_id = subscriptions.id
			ORDER BY runs.id DESC LIMIT 1) = ? THEN 1 ELSE 0 END), 0)
		FROM subscriptions GROUP BY state`, string(calsyncd.StateError), string(calsyncd.OutcomeFailed))
	if err != nil {
		return c, fmt.Errorf("store: count subscriptions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			state               string
			n, holding, failing int
		)
		if err := rows.Scan(&state, &n, &holding, &failing); err != nil {
			return c, fmt.Errorf("store: count subscriptions: %w", err)
		}
		if state == "" {
			state = string(calsyncd.StateActive)
		}
		c.States[calsyncd.State(state)] += n
		c.Total += n
		c.HoldingDeletes += holding
		c.Failing += failing
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("store: count subscriptions: %w", err)
	}
	return c, nil
}

// MappingCounts is how many events each of ids has mapped (absent: none).
func (s *Store) MappingCounts(ctx context.Context, ids []string) (map[string]int, error) {
	out := map[string]int{}
	err := s.inChunks(ctx, ids, func(in string, args []any) error {
		rows, err := s.query(ctx, `SELECT subscription_id, COUNT(*) FROM mappings WHERE subscription_id IN (`+in+`)
			GROUP BY subscription_id`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id string
				n  int
			)
			if err := rows.Scan(&id, &n); err != nil {
				return err
			}
			out[id] = n
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: count mappings: %w", err)
	}
	return out, nil
}

// RejectionsOf is the events Google refused for each of ids, each
// subscription's by key (absent: none).
func (s *Store) RejectionsOf(ctx context.Context, ids []string) (map[string][]calsyncd.Rejection, error) {
	out := map[string][]calsyncd.Rejection{}
	err := s.inChunks(ctx, ids, func(in string, args []any) error {
		rows, err := s.query(ctx, `SELECT subscription_id, uid, recurrence_id, hash, reason, at FROM rejections
			WHERE subscription_id IN (`+in+`) ORDER BY subscription_id, uid, recurrence_id`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id string
				r  calsyncd.Rejection
				at int64
			)
			if err := rows.Scan(&id, &r.Key.UID, &r.Key.RecurrenceID, &r.Hash, &r.Reason, &at); err != nil {
				return err
			}
			r.At = fromMS(at)
			out[id] = append(out[id], r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: load rejections: %w", err)
	}
	return out, nil
}

const runColumns = `id, subscription_id, started_at, finished_at, outcome, created, updated, deleted,
		unchanged, deferred, failed, rejected, held_deletes, filtered, repaired, error_class, error`

// RecentRuns is the n newest runs of each of ids, newest first, as Runs
// lists one subscription's (absent: none). Each subscription costs an
// index seek or two, however long its history.
func (s *Store) RecentRuns(ctx context.Context, ids []string, n int) (map[string][]calsyncd.Run, error) {
	out := map[string][]calsyncd.Run{}
	if n <= 0 {
		return out, nil
	}
	err := s.inChunks(ctx, ids, func(in string, args []any) error {
		var q string
		if s.driver == "postgres" {
			q = `SELECT r.* FROM subscriptions s CROSS JOIN LATERAL (SELECT ` + runColumns + ` FROM runs
				WHERE runs.subscription_id = s.id ORDER BY runs.id DESC LIMIT ?) r
				WHERE s.id IN (` + in + `) ORDER BY r.subscription_id, r.id DESC`
			args = append([]any{n}, args...)
		} else {
			// SQLite has no LATERAL: the id of each subscription's nth
			// newest run bounds a range scan of the (subscription_id, id)
			// index, computed once per subscription.
			q = `SELECT ` + prefixed("r.", runColumns) + ` FROM subscriptions s JOIN runs r ON r.subscription_id = s.id
				AND r.id >= COALESCE((SELECT x.id FROM runs x WHERE x.subscription_id = s.id ORDER BY x.id DESC LIMIT 1 OFFSET ?), 0)
				WHERE s.id IN (` + in + `) ORDER BY r.subscription_id, r.id DESC`
			args = append([]any{n - 1}, args...)
		}
		rows, err := s.query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				r                 calsyncd.Run
				started, finished int64
			)
			if err := rows.Scan(&r.ID, &r.SubscriptionID, &started, &finished, &r.Outcome, &r.Created, &r.Updated,
				&r.Deleted, &r.Unchanged, &r.Deferred, &r.Failed, &r.Rejected, &r.HeldDeletes, &r.Filtered, &r.Repaired,
				&r.ErrorClass, &r.Error); err != nil {
				return err
			}
			r.StartedAt, r.FinishedAt = fromMS(started), fromMS(finished)
			out[r.SubscriptionID] = append(out[r.SubscriptionID], r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: list recent runs: %w", err)
	}
	return out, nil
}

// LastSuccesses is, for each of ids that had one, when its last
// successful run finished (as LastSuccess says).
func (s *Store) LastSuccesses(ctx context.Context, ids []string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	err := s.inChunks(ctx, ids, func(in string, args []any) error {
		args = append([]any{string(calsyncd.OutcomeOK), string(calsyncd.OutcomePartial), string(calsyncd.OutcomeNotModified)}, args...)
		rows, err := s.query(ctx, `SELECT s.id, COALESCE((SELECT r.finished_at FROM runs r
			WHERE r.subscription_id = s.id AND r.outcome IN (?, ?, ?) ORDER BY r.id DESC LIMIT 1), 0)
			FROM subscriptions s WHERE s.id IN (`+in+`)`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id   string
				last int64
			)
			if err := rows.Scan(&id, &last); err != nil {
				return err
			}
			if last != 0 {
				out[id] = fromMS(last)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: last successful runs: %w", err)
	}
	return out, nil
}

// inChunks calls fn for each idChunk of ids with the placeholders and
// arguments that name them.
func (s *Store) inChunks(ctx context.Context, ids []string, fn func(in string, args []any) error) error {
	for chunk := range slices.Chunk(ids, idChunk) {
		if err := ctx.Err(); err != nil {
			return err
		}
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		if err := fn(strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", "), args); err != nil {
			return err
		}
	}
	return nil
}

// prefixed qualifies each of a comma-separated list of columns.
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
