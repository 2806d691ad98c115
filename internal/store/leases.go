package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// DefaultLeaseTTL is the visibility timeout: how long a replica that stops
// heartbeating keeps its accounts before another replica may take them.
const DefaultLeaseTTL = 60 * time.Second

// ClaimLease tries to take the lease on account for owner until Now+ttl. It
// succeeds when the account is free, its lease has expired, or owner already
// holds it (which renews it). Otherwise claimed is false and the returned
// Lease names the current holder. Losing the race is a result, not an error.
//
// The claim is one conditional upsert, atomic on both drivers: the insert
// wins when no row exists; on conflict the row is overwritten only if the
// WHERE holds, which PostgreSQL evaluates on the latest committed version
// under a row lock and SQLite under its single-writer lock. Of N replicas
// racing for a free account exactly one gets a row back. (FOR UPDATE SKIP
// LOCKED suits "give me any free item" queues; we claim named accounts, and
// SQLite has no SKIP LOCKED, so one statement serves both.)
func (s *Store) ClaimLease(ctx context.Context, account, owner string, ttl time.Duration) (l calsyncd.Lease, claimed bool, err error) {
	if err := checkLeaseArgs(account, owner, ttl); err != nil {
		return calsyncd.Lease{}, false, err
	}
	now := s.Now()
	var expires int64
	err = s.writeRow(ctx, `INSERT INTO leases (account, owner, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (account) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE leases.expires_at <= ? OR leases.owner = excluded.owner
		RETURNING expires_at`,
		account, owner, ms(now.Add(ttl)), ms(now)).Scan(&expires)
	switch {
	case err == nil:
		return calsyncd.Lease{Account: account, Owner: owner, ExpiresAt: fromMS(expires)}, true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return calsyncd.Lease{}, false, fmt.Errorf("store: claim lease on %s: %w", account, err)
	}
	// Someone else holds it. Read who, for the caller's log and status; the
	// holder may have released it since, which leaves an empty Lease.
	l, err = s.lease(ctx, account)
	if err != nil {
		return calsyncd.Lease{}, false, fmt.Errorf("store: claim lease on %s: %w", account, err)
	}
	return l, false, nil
}

// ExtendLease is the holder's heartbeat: it moves the expiry to Now+ttl. It
// fails with calsyncd.ErrLeaseLost unless owner holds an unexpired lease, because a
// lease that lapsed may have been taken and given back meanwhile.
func (s *Store) ExtendLease(ctx context.Context, account, owner string, ttl time.Duration) (calsyncd.Lease, error) {
	if err := checkLeaseArgs(account, owner, ttl); err != nil {
		return calsyncd.Lease{}, err
	}
	now := s.Now()
	var expires int64
	err := s.writeRow(ctx, `UPDATE leases SET expires_at = ? WHERE account = ? AND owner = ? AND expires_at > ?
		RETURNING expires_at`, ms(now.Add(ttl)), account, owner, ms(now)).Scan(&expires)
	if errors.Is(err, sql.ErrNoRows) {
		return calsyncd.Lease{}, fmt.Errorf("store: extend lease on %s for %s: %w", account, owner, calsyncd.ErrLeaseLost)
	}
	if err != nil {
		return calsyncd.Lease{}, fmt.Errorf("store: extend lease on %s: %w", account, err)
	}
	return calsyncd.Lease{Account: account, Owner: owner, ExpiresAt: fromMS(expires)}, nil
}

// TakeOverLease moves a lease from a holder known to be dead (a process on
// this host that no longer exists) to owner, without waiting for the expiry.
// It succeeds only if from still holds the row, so two replicas taking over
// the same dead holder cannot both win.
func (s *Store) TakeOverLease(ctx context.Context, account, from, owner string, ttl time.Duration) (calsyncd.Lease, bool, error) {
	if err := checkLeaseArgs(account, owner, ttl); err != nil {
		return calsyncd.Lease{}, false, err
	}
	now := s.Now()
	var expires int64
	err := s.writeRow(ctx, `UPDATE leases SET owner = ?, expires_at = ? WHERE account = ? AND owner = ? RETURNING expires_at`,
		owner, ms(now.Add(ttl)), account, from).Scan(&expires)
	if errors.Is(err, sql.ErrNoRows) {
		return calsyncd.Lease{}, false, nil
	}
	if err != nil {
		return calsyncd.Lease{}, false, fmt.Errorf("store: take over lease on %s: %w", account, err)
	}
	return calsyncd.Lease{Account: account, Owner: owner, ExpiresAt: fromMS(expires)}, true, nil
}

// ReleaseLease gives the account back (on shutdown) so another replica can
// take it without waiting for the expiry. Only the owner can release; for
// anyone else it changes nothing and returns calsyncd.ErrLeaseLost.
func (s *Store) ReleaseLease(ctx context.Context, account, owner string) error {
	res, err := s.exec(ctx, `DELETE FROM leases WHERE account = ? AND owner = ?`, account, owner)
	if err != nil {
		return fmt.Errorf("store: release lease on %s: %w", account, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: release lease on %s: %w", account, err)
	} else if n == 0 {
		return fmt.Errorf("store: release lease on %s for %s: %w", account, owner, calsyncd.ErrLeaseLost)
	}
	return nil
}

// ReleaseLeases gives back every lease owner holds (on SIGTERM) and says how
// many there were.
func (s *Store) ReleaseLeases(ctx context.Context, owner string) (int, error) {
	res, err := s.exec(ctx, `DELETE FROM leases WHERE owner = ?`, owner)
	if err != nil {
		return 0, fmt.Errorf("store: release leases of %s: %w", owner, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: release leases of %s: %w", owner, err)
	}
	return int(n), nil
}

// Leases lists every lease row by account, expired ones included (a replica
// that died shows its leases until they are taken over): use HeldAt to tell.
func (s *Store) Leases(ctx context.Context) ([]calsyncd.Lease, error) {
	rows, err := s.query(ctx, `SELECT account, owner, expires_at FROM leases ORDER BY account`)
	if err != nil {
		return nil, fmt.Errorf("store: list leases: %w", err)
	}
	defer rows.Close()
	var out []calsyncd.Lease
	for rows.Next() {
		var (
			l       calsyncd.Lease
			expires int64
		)
		if err := rows.Scan(&l.Account, &l.Owner, &expires); err != nil {
			return nil, fmt.Errorf("store: list leases: %w", err)
		}
		l.ExpiresAt = fromMS(expires)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list leases: %w", err)
	}
	return out, nil
}

// lease reads one account's lease row; an absent row is the zero Lease.
func (s *Store) lease(ctx context.Context, account string) (calsyncd.Lease, error) {
	var (
		l       = calsyncd.Lease{Account: account}
		expires int64
	)
	err := s.queryRow(ctx, `SELECT owner, expires_at FROM leases WHERE account = ?`, account).Scan(&l.Owner, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return l, nil
	}
	if err != nil {
		return calsyncd.Lease{}, err
	}
	l.ExpiresAt = fromMS(expires)
	return l, nil
}

func checkLeaseArgs(account, owner string, ttl time.Duration) error {
	switch {
	case account == "":
		return errors.New("store: lease: empty account")
	case owner == "":
		return errors.New("store: lease: empty owner")
	case ttl < time.Millisecond:
		// Expiries are stored in milliseconds; a shorter ttl would be an
		// already-expired lease.
		return fmt.Errorf("store: lease: ttl %s must be at least 1ms", ttl)
	}
	return nil
}
