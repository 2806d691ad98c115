package store

import (
	"context"
	"fmt"

	calsyncd "github.com/calsyncd/calsyncd"
)

// Mappings loads every mapping of a subscription.
func (s *Store) Mappings(ctx context.Context, subscriptionID string) ([]calsyncd.Mapping, error) {
	rows, err := s.query(ctx, `SELECT uid, recurrence_id, event_id, generation, hash, etag, ends_at, fields, created_at, updated_at
		FROM mappings WHERE subscription_id = ? ORDER BY uid, recurrence_id`, subscriptionID)
	if err != nil {
		return nil, fmt.Errorf("store: load mappings of %s: %w", subscriptionID, err)
	}
	defer rows.Close()
	var out []calsyncd.Mapping
	for rows.Next() {
		var (
			m                      calsyncd.Mapping
			ends, created, updated int64
		)
		if err := rows.Scan(&m.Key.UID, &m.Key.RecurrenceID, &m.EventID, &m.Generation, &m.Hash, &m.ETag, &ends, &m.Fields, &created, &updated); err != nil {
			return nil, fmt.Errorf("store: load mappings of %s: %w", subscriptionID, err)
		}
		m.EndsAt, m.CreatedAt, m.UpdatedAt = fromMS(ends), fromMS(created), fromMS(updated)
		out = append(out, m)
	}
	return out, rows.Err()
}

// CountMappings is how many events a subscription has mapped.
func (s *Store) CountMappings(ctx context.Context, subscriptionID string) (int, error) {
	var n int
	if err := s.queryRow(ctx, `SELECT COUNT(*) FROM mappings WHERE subscription_id = ?`, subscriptionID).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count mappings of %s: %w", subscriptionID, err)
	}
	return n, nil
}

// DeleteMappings forgets every mapping of a subscription (its rejections
// stay: they are about the events' content): the subscription moved to
// another calendar, where its events are mapped anew. What is still
// queued for it is committed first.
func (s *Store) DeleteMappings(ctx context.Context, subscriptionID string) error {
	if err := s.Flush(ctx, subscriptionID); err != nil {
		return err
	}
	if _, err := s.exec(ctx, `DELETE FROM mappings WHERE subscription_id = ?`, subscriptionID); err != nil {
		return fmt.Errorf("store: delete mappings of %s: %w", subscriptionID, err)
	}
	return nil
}

// PutMapping records (or replaces) one mapping and forgets the key's
// rejection, committed before it returns.
func (s *Store) PutMapping(ctx context.Context, subscriptionID string, m calsyncd.Mapping) error {
	return s.Record(ctx, subscriptionID, calsyncd.MappingSaved(m))
}

// DeleteMapping forgets one mapping (its Google event is gone).
func (s *Store) DeleteMapping(ctx context.Context, subscriptionID string, k calsyncd.Key) error {
	return s.Record(ctx, subscriptionID, calsyncd.MappingDeleted(k))
}

// Rejections loads the events Google refused for a subscription.
func (s *Store) Rejections(ctx context.Context, subscriptionID string) ([]calsyncd.Rejection, error) {
	rows, err := s.query(ctx, `SELECT uid, recurrence_id, hash, reason, at FROM rejections
		WHERE subscription_id = ? ORDER BY uid, recurrence_id`, subscriptionID)
	if err != nil {
		return nil, fmt.Errorf("store: load rejections of %s: %w", subscriptionID, err)
	}
	defer rows.Close()
	var out []calsyncd.Rejection
	for rows.Next() {
		var (
			r  calsyncd.Rejection
			at int64
		)
		if err := rows.Scan(&r.Key.UID, &r.Key.RecurrenceID, &r.Hash, &r.Reason, &at); err != nil {
			return nil, fmt.Errorf("store: load rejections of %s: %w", subscriptionID, err)
		}
		r.At = fromMS(at)
		out = append(out, r)
	}
	return out, rows.Err()
}

// PutRejection records that Google refused an event with this content.
func (s *Store) PutRejection(ctx context.Context, subscriptionID string, r calsyncd.Rejection) error {
	return s.Record(ctx, subscriptionID, calsyncd.RejectionSaved(r))
}

// DeleteRejection forgets a rejection (the event left the feed).
func (s *Store) DeleteRejection(ctx context.Context, subscriptionID string, k calsyncd.Key) error {
	return s.Record(ctx, subscriptionID, calsyncd.RejectionDeleted(k))
}
