package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	calsyncd "github.com/calsyncd/calsyncd"
)

// AddRunChanges keeps what a run wrote, after what it kept already (a run
// writes in one or two rounds), up to calsyncd.MaxRunChanges per run; the
// rest are only counted (in the run). A delete without a title takes the
// title and start its event was last written with, when a run still kept
// here wrote it.
func (s *Store) AddRunChanges(ctx context.Context, subscriptionID string, runID int64, changes []calsyncd.RunChange) error {
	if len(changes) == 0 {
		return nil
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("store: keep the changes of run %d: %w", runID, err)
	}
	defer tx.Rollback()
	var kept int
	if err := tx.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*) FROM run_changes WHERE run_id = ?`), runID).Scan(&kept); err != nil {
		return fmt.Errorf("store: keep the changes of run %d: %w", runID, err)
	}
	for _, c := range changes {
		if kept >= calsyncd.MaxRunChanges {
			break
		}
		if c.Kind == calsyncd.RunDeleted && c.Title == "" {
			var starts int64
			var allDay int
			err := tx.QueryRowContext(ctx, s.rebind(`SELECT title, starts_at, all_day FROM run_changes
				WHERE subscription_id = ? AND uid = ? AND recurrence_id = ? AND kind <> ? ORDER BY run_id DESC, seq DESC LIMIT 1`),
				subscriptionID, c.Key.UID, c.Key.RecurrenceID, string(calsyncd.RunDeleted)).Scan(&c.Title, &starts, &allDay)
			switch {
			case err == nil:
				if c.Start.IsZero() {
					c.Start, c.AllDay = fromMS(starts), allDay != 0
				}
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("store: keep the changes of run %d: %w", runID, err)
			}
		}
		allDay := 0
		if c.AllDay {
			allDay = 1
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO run_changes (run_id, seq, subscription_id, kind, uid, recurrence_id, title, starts_at, all_day)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`), runID, kept, subscriptionID, string(c.Kind), c.Key.UID, c.Key.RecurrenceID, c.Title, ms(c.Start), allDay); err != nil {
			return fmt.Errorf("store: keep the changes of run %d: %w", runID, err)
		}
		kept++
	}
	if err := s.commit(tx); err != nil {
		return fmt.Errorf("store: keep the changes of run %d: %w", runID, err)
	}
	return nil
}

// RunChanges is what the store kept of a run's writes, in the order they
// were done.
func (s *Store) RunChanges(ctx context.Context, runID int64) ([]calsyncd.RunChange, error) {
	rows, err := s.query(ctx, `SELECT kind, uid, recurrence_id, title, starts_at, all_day FROM run_changes WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: the changes of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []calsyncd.RunChange
	for rows.Next() {
		var (
			c      calsyncd.RunChange
			starts int64
			allDay int
		)
		if err := rows.Scan(&c.Kind, &c.Key.UID, &c.Key.RecurrenceID, &c.Title, &starts, &allDay); err != nil {
			return nil, fmt.Errorf("store: the changes of run %d: %w", runID, err)
		}
		c.Start, c.AllDay = fromMS(starts), allDay != 0
		out = append(out, c)
	}
	return out, rows.Err()
}

// WrittenAs is the title and start each of keys was last created or
// updated with, as the runs still kept here recorded them; a key no kept
// run wrote is missing from the map. It reads the subscription's kept
// changes once (bounded by calsyncd.MaxRunChanges per kept run), however
// many keys are asked for.
func (s *Store) WrittenAs(ctx context.Context, subscriptionID string, keys []calsyncd.Key) (map[calsyncd.Key]calsyncd.RunChange, error) {
	out := map[calsyncd.Key]calsyncd.RunChange{}
	if len(keys) == 0 {
		return out, nil
	}
	want := make(map[calsyncd.Key]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	rows, err := s.query(ctx, `SELECT kind, uid, recurrence_id, title, starts_at, all_day FROM run_changes
		WHERE subscription_id = ? AND kind <> ? ORDER BY run_id, seq`, subscriptionID, string(calsyncd.RunDeleted))
	if err != nil {
		return nil, fmt.Errorf("store: the titles written for %s: %w", subscriptionID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			c      calsyncd.RunChange
			starts int64
			allDay int
		)
		if err := rows.Scan(&c.Kind, &c.Key.UID, &c.Key.RecurrenceID, &c.Title, &starts, &allDay); err != nil {
			return nil, fmt.Errorf("store: the titles written for %s: %w", subscriptionID, err)
		}
		if want[c.Key] {
			c.Start, c.AllDay = fromMS(starts), allDay != 0
			out[c.Key] = c // the later run's wins
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: the titles written for %s: %w", subscriptionID, err)
	}
	return out, nil
}
