package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// Account loads an account's throttle memory; an unknown account has none.
func (s *Store) Account(ctx context.Context, name string) (calsyncd.AccountState, error) {
	var (
		a              calsyncd.AccountState
		until, updated int64
		spacing        int64
	)
	err := s.queryRow(ctx, `SELECT name, throttle_until, throttle_class, throttle_level, spacing_ms, updated_at
		FROM accounts WHERE name = ?`, name).Scan(&a.Name, &until, &a.ThrottleClass, &a.ThrottleLevel, &spacing, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return calsyncd.AccountState{Name: name}, nil
	}
	if err != nil {
		return calsyncd.AccountState{}, fmt.Errorf("store: load account %s: %w", name, err)
	}
	a.ThrottleUntil, a.UpdatedAt = fromMS(until), fromMS(updated)
	a.Spacing = time.Duration(spacing) * time.Millisecond
	return a, nil
}

// Accounts lists every account with throttle memory.
func (s *Store) Accounts(ctx context.Context) ([]calsyncd.AccountState, error) {
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
	out := make([]calsyncd.AccountState, 0, len(names))
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
func (s *Store) SaveAccount(ctx context.Context, a calsyncd.AccountState) error {
	_, err := s.exec(ctx, `INSERT INTO accounts (name, throttle_until, throttle_class, throttle_level, spacing_ms, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET throttle_until = excluded.throttle_until, throttle_class = excluded.throttle_class,
			throttle_level = excluded.throttle_level, spacing_ms = excluded.spacing_ms, updated_at = excluded.updated_at`,
		a.Name, ms(a.ThrottleUntil), string(a.ThrottleClass), a.ThrottleLevel, a.Spacing.Milliseconds(), ms(s.Now()))
	if err != nil {
		return fmt.Errorf("store: save account %s: %w", a.Name, err)
	}
	return nil
}
