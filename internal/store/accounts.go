package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// AccountState is the throttle memory of one Google account: the window
// during which writes are deferred without asking Google, and the pacer
// spacing learned from rate limits.
type AccountState struct {
	Name          string
	ThrottleUntil time.Time
	ThrottleClass string // "rate_limited" or "usage_limited"
	ThrottleLevel int    // consecutive windows opened; drives the doubling
	Spacing       time.Duration
	UpdatedAt     time.Time
}

// Account loads an account's throttle memory; an unknown account has none.
func (s *Store) Account(ctx context.Context, name string) (AccountState, error) {
	var (
		a              AccountState
		until, updated int64
		spacing        int64
	)
	err := s.queryRow(ctx, `SELECT name, throttle_until, throttle_class, throttle_level, spacing_ms, updated_at
		FROM accounts WHERE name = ?`, name).Scan(&a.Name, &until, &a.ThrottleClass, &a.ThrottleLevel, &spacing, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return AccountState{Name: name}, nil
	}
	if err != nil {
		return AccountState{}, fmt.Errorf("store: load account %s: %w", name, err)
	}
	a.ThrottleUntil, a.UpdatedAt = fromMS(until), fromMS(updated)
	a.Spacing = time.Duration(spacing) * time.Millisecond
	return a, nil
}

// Accounts lists every account with throttle memory.
func (s *Store) Accounts(ctx context.Context) ([]AccountState, error) {
	rows, err := s.query(ctx, `SELECT name FROM accounts ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: list accounts: %w", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: list accounts: %w", err)
		}
		names = append(names, n)
	}
	rows.Close()
	out := make([]AccountState, 0, len(names))
	for _, n := range names {
		a, err := s.Account(ctx, n)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// SaveAccount writes an account's throttle memory.
func (s *Store) SaveAccount(ctx context.Context, a AccountState) error {
	_, err := s.exec(ctx, `INSERT INTO accounts (name, throttle_until, throttle_class, throttle_level, spacing_ms, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET throttle_until = excluded.throttle_until, throttle_class = excluded.throttle_class,
			throttle_level = excluded.throttle_level, spacing_ms = excluded.spacing_ms, updated_at = excluded.updated_at`,
		a.Name, ms(a.ThrottleUntil), a.ThrottleClass, a.ThrottleLevel, a.Spacing.Milliseconds(), ms(s.Now()))
	if err != nil {
		return fmt.Errorf("store: save account %s: %w", a.Name, err)
	}
	return nil
}
