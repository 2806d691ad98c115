package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	calsyncd "github.com/calsyncd/calsyncd"
)

// AlertState loads what the alerts remember of a condition; found is false
// when none was announced (or it has cleared since).
func (s *Store) AlertState(ctx context.Context, condition, subject string) (st calsyncd.AlertState, found bool, err error) {
	var since, notified int64
	err = s.queryRow(ctx, `SELECT condition, subject, since, notified_at FROM alert_states WHERE condition = ? AND subject = ?`,
		condition, subject).Scan(&st.Condition, &st.Subject, &since, &notified)
	if errors.Is(err, sql.ErrNoRows) {
		return calsyncd.AlertState{}, false, nil
	}
	if err != nil {
		return calsyncd.AlertState{}, false, fmt.Errorf("store: load alert state %s/%s: %w", condition, subject, err)
	}
	st.Since, st.NotifiedAt = fromMS(since), fromMS(notified)
	return st, true, nil
}

// SaveAlertState records that a condition was announced or reminded of.
func (s *Store) SaveAlertState(ctx context.Context, st calsyncd.AlertState) error {
	_, err := s.exec(ctx, `INSERT INTO alert_states (condition, subject, since, notified_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (condition, subject) DO UPDATE SET since = excluded.since, notified_at = excluded.notified_at`,
		st.Condition, st.Subject, ms(st.Since), ms(st.NotifiedAt))
	if err != nil {
		return fmt.Errorf("store: save alert state %s/%s: %w", st.Condition, st.Subject, err)
	}
	return nil
}

// DeleteAlertState forgets a condition that cleared.
func (s *Store) DeleteAlertState(ctx context.Context, condition, subject string) error {
	if _, err := s.exec(ctx, `DELETE FROM alert_states WHERE condition = ? AND subject = ?`, condition, subject); err != nil {
		return fmt.Errorf("store: delete alert state %s/%s: %w", condition, subject, err)
	}
	return nil
}

// AlertStates lists everything the alerts remember, by condition and
// subject.
func (s *Store) AlertStates(ctx context.Context) ([]calsyncd.AlertState, error) {
	rows, err := s.query(ctx, `SELECT condition, subject, since, notified_at FROM alert_states ORDER BY condition, subject`)
	if err != nil {
		return nil, fmt.Errorf("store: list alert states: %w", err)
	}
	defer rows.Close()
	var out []calsyncd.AlertState
	for rows.Next() {
		var st calsyncd.AlertState
		var since, notified int64
		if err := rows.Scan(&st.Condition, &st.Subject, &since, &notified); err != nil {
			return nil, fmt.Errorf("store: list alert states: %w", err)
		}
		st.Since, st.NotifiedAt = fromMS(since), fromMS(notified)
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list alert states: %w", err)
	}
	return out, nil
}
