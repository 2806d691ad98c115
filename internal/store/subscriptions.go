package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

const subscriptionColumns = `id, calendar, account, state, consecutive_errors, last_error_class, last_error,
	etag, last_modified, body_hash, render_policy, filtered, fetch_not_before, guard_runs, held_deletes, last_reconcile_at,
	next_run_at, notes, created_at, updated_at, guard_peak, guard_peak_at, vacating, feed_throttled_since,
	guard_held, guard_base, guard_by_config, reread_at`

// EnsureSubscription creates the subscription's row if it is new and
// returns its state. An existing row keeps the calendar and account its
// events are in: a subscription whose configured ones differ has moved,
// and its runner moves it (SaveSubscription), once its events are in the
// new calendar.
func (s *Store) EnsureSubscription(ctx context.Context, id, calendar, account string) (calsyncd.SubscriptionState, error) {
	// Every run begins here: a subscription the database knows costs a
	// read, not a write on the one connection every run writes through.
	if st, err := s.Subscription(ctx, id); !errors.Is(err, ErrNotFound) {
		return st, err
	}
	now := ms(s.Now())
	_, err := s.exec(ctx, `INSERT INTO subscriptions (id, calendar, account, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO NOTHING`,
		id, calendar, account, now, now)
	if err != nil {
		return calsyncd.SubscriptionState{}, fmt.Errorf("store: ensure subscription %s: %w", id, err)
	}
	return s.Subscription(ctx, id)
}

// Subscription loads one subscription's state.
func (s *Store) Subscription(ctx context.Context, id string) (calsyncd.SubscriptionState, error) {
	row := s.queryRow(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions WHERE id = ?`, id)
	st, err := scanSubscription(row)
	if errors.Is(err, sql.ErrNoRows) {
		return calsyncd.SubscriptionState{}, fmt.Errorf("store: subscription %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return calsyncd.SubscriptionState{}, fmt.Errorf("store: load subscription %s: %w", id, err)
	}
	return st, nil
}

// LookupSubscription loads one subscription's state, reporting whether the
// database knows it; unlike EnsureSubscription it writes nothing (a
// dry-run reads with it).
func (s *Store) LookupSubscription(ctx context.Context, id string) (calsyncd.SubscriptionState, bool, error) {
	st, err := s.Subscription(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return calsyncd.SubscriptionState{}, false, nil
	}
	return st, err == nil, err
}

// Subscriptions lists every subscription the database knows, by id.
func (s *Store) Subscriptions(ctx context.Context) ([]calsyncd.SubscriptionState, error) {
	rows, err := s.query(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: list subscriptions: %w", err)
	}
	defer rows.Close()
	var out []calsyncd.SubscriptionState
	for rows.Next() {
		st, err := scanSubscription(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list subscriptions: %w", err)
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// SetNextRun records when the scheduler will run the subscription next (for
// `calsyncd status` without a daemon to ask). It is kept apart from
// SaveSubscription so a run finishing never overwrites it with a stale value.
func (s *Store) SetNextRun(ctx context.Context, id string, at time.Time) error {
	if _, err := s.exec(ctx, `UPDATE subscriptions SET next_run_at = ? WHERE id = ?`, ms(at), id); err != nil {
		return fmt.Errorf("store: set next run of %s: %w", id, err)
	}
	return nil
}

// SaveSubscription writes a subscription's state (the row must exist); the
// next run time is left to SetNextRun.
func (s *Store) SaveSubscription(ctx context.Context, st calsyncd.SubscriptionState) error {
	notes, vacating := "", ""
	if len(st.Notes) > 0 {
		b, _ := json.Marshal(st.Notes)
		notes = string(b)
	}
	if len(st.Vacating) > 0 {
		b, _ := json.Marshal(st.Vacating)
		vacating = string(b)
	}
	res, err := s.exec(ctx, `UPDATE subscriptions SET calendar = ?, account = ?, state = ?, consecutive_errors = ?,
		last_error_class = ?, last_error = ?, etag = ?, last_modified = ?, body_hash = ?, render_policy = ?, filtered = ?, fetch_not_before = ?,
		guard_runs = ?, held_deletes = ?, last_reconcile_at = ?, notes = ?, updated_at = ?,
		guard_peak = ?, guard_peak_at = ?, vacating = ?, feed_throttled_since = ?,
		guard_held = ?, guard_base = ?, guard_by_config = ?, reread_at = ?
		WHERE id = ?`,
		st.Calendar, st.Account, string(st.State), st.ConsecutiveErrors, string(st.LastErrorClass), st.LastError,
		st.ETag, st.LastModified, st.BodyHash, st.RenderPolicy, st.Filtered, ms(st.FetchNotBefore), st.GuardRuns, st.HeldDeletes,
		ms(st.LastReconcileAt), notes, ms(s.Now()),
		st.GuardPeak, ms(st.GuardPeakAt), vacating, ms(st.FeedThrottledSince),
		st.GuardHeld, st.GuardBase, boolInt(st.GuardByConfig), ms(st.RereadAt), st.ID)
	if err != nil {
		return fmt.Errorf("store: save subscription %s: %w", st.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: save subscription %s: %w", st.ID, ErrNotFound)
	}
	return nil
}

// DeleteSubscription forgets a subscription and everything it owns in the
// database (mappings, rejections, runs).
func (s *Store) DeleteSubscription(ctx context.Context, id string) error {
	// Changes still queued for it would be committed after the delete and
	// fail on their foreign key; they no longer matter.
	_ = s.Flush(ctx, id)
	if _, err := s.exec(ctx, `DELETE FROM subscriptions WHERE id = ?`, id); err != nil {
		return fmt.Errorf("store: delete subscription %s: %w", id, err)
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

func scanSubscription(r scanner) (calsyncd.SubscriptionState, error) {
	var (
		st                                            calsyncd.SubscriptionState
		fetchNB, reconcile, nextRun, created, updated int64
		peakAt, throttled, byConfig, reread           int64
		notes, vacating                               string
	)
	err := r.Scan(&st.ID, &st.Calendar, &st.Account, &st.State, &st.ConsecutiveErrors, &st.LastErrorClass,
		&st.LastError, &st.ETag, &st.LastModified, &st.BodyHash, &st.RenderPolicy, &st.Filtered, &fetchNB, &st.GuardRuns, &st.HeldDeletes,
		&reconcile, &nextRun, &notes, &created, &updated, &st.GuardPeak, &peakAt, &vacating, &throttled,
		&st.GuardHeld, &st.GuardBase, &byConfig, &reread)
	if err != nil {
		return st, err
	}
	st.GuardPeakAt = fromMS(peakAt)
	st.GuardByConfig = byConfig != 0
	st.RereadAt = fromMS(reread)
	st.FeedThrottledSince = fromMS(throttled)
	if vacating != "" {
		_ = json.Unmarshal([]byte(vacating), &st.Vacating)
	}
	st.FetchNotBefore = fromMS(fetchNB)
	st.LastReconcileAt = fromMS(reconcile)
	st.NextRunAt = fromMS(nextRun)
	st.CreatedAt = fromMS(created)
	st.UpdatedAt = fromMS(updated)
	if notes != "" {
		_ = json.Unmarshal([]byte(notes), &st.Notes)
	}
	return st, nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
