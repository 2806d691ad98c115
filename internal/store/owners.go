package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	calsyncd "github.com/calsyncd/calsyncd"
)

// ClaimOwner settles the name this installation writes its events under and
// records it: the configured name when there is one (the name it replaces
// stays recognised, as a former name), else the name the database already
// holds, else fallback (the host name), so an installation keeps its name
// when its host is renamed, and replicas sharing one database share one
// name. Replicas starting together agree: the first to commit wins, the
// others read its choice.
func (s *Store) ClaimOwner(ctx context.Context, configured, fallback string) (calsyncd.Owner, error) {
	if configured == "" && fallback == "" {
		return calsyncd.Owner{}, errors.New("store: claim owner: no name")
	}
	var err error
	for range 3 {
		var o calsyncd.Owner
		if o, err = s.claimOwner(ctx, configured, fallback); err == nil {
			return o, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return calsyncd.Owner{}, fmt.Errorf("store: claim owner: %w", err)
}

func (s *Store) claimOwner(ctx context.Context, configured, fallback string) (calsyncd.Owner, error) {
	tx, err := s.begin(ctx)
	if err != nil {
		return calsyncd.Owner{}, err
	}
	defer tx.Rollback()
	var current string
	err = tx.QueryRowContext(ctx, s.rebind(`SELECT name FROM owners WHERE current = 1`)).Scan(&current)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return calsyncd.Owner{}, err
	}
	want := pickOwner(configured, current, fallback)
	if want != current {
		// Demote only the name read: under PostgreSQL's read committed a
		// replica that committed its name meanwhile would otherwise be
		// demoted by this one, which read none (the first to commit must
		// win). With its row left current, the insert below breaks the
		// one-current index and the retry reads the winner.
		if _, err := tx.ExecContext(ctx, s.rebind(`UPDATE owners SET current = 0 WHERE current = 1 AND name = ?`), current); err != nil {
			return calsyncd.Owner{}, err
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO owners (name, current, since) VALUES (?, 1, ?)
			ON CONFLICT (name) DO UPDATE SET current = 1, since = excluded.since`), want, ms(s.Now())); err != nil {
			return calsyncd.Owner{}, err
		}
	}
	former, err := s.formerOwners(ctx, tx, want)
	if err != nil {
		return calsyncd.Owner{}, err
	}
	if err := s.commit(tx); err != nil {
		return calsyncd.Owner{}, err
	}
	return calsyncd.Owner{Name: want, Former: former}, nil
}

// Owner is what ClaimOwner would settle, without writing: for the commands
// that promise to write nothing.
func (s *Store) Owner(ctx context.Context, configured, fallback string) (calsyncd.Owner, error) {
	var current string
	err := s.queryRow(ctx, `SELECT name FROM owners WHERE current = 1`).Scan(&current)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return calsyncd.Owner{}, fmt.Errorf("store: owner: %w", err)
	}
	want := pickOwner(configured, current, fallback)
	rows, err := s.query(ctx, `SELECT name FROM owners WHERE name <> ? ORDER BY since, name`, want)
	if err != nil {
		return calsyncd.Owner{}, fmt.Errorf("store: owner: %w", err)
	}
	former, err := scanNames(rows)
	if err != nil {
		return calsyncd.Owner{}, fmt.Errorf("store: owner: %w", err)
	}
	return calsyncd.Owner{Name: want, Former: former}, nil
}

func pickOwner(configured, current, fallback string) string {
	switch {
	case configured != "":
		return configured
	case current != "":
		return current
	}
	return fallback
}

func (s *Store) formerOwners(ctx context.Context, tx *sql.Tx, current string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, s.rebind(`SELECT name FROM owners WHERE name <> ? ORDER BY since, name`), current)
	if err != nil {
		return nil, err
	}
	return scanNames(rows)
}

func scanNames(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
