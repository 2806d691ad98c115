package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// Group commit. A write Google accepted must be recorded, but one commit
// (one disk flush under synchronous=FULL) per write made a 2,000-event
// rekey cost 4,000 flushes. So changes to mappings and rejections are
// queued and committed together: when DefaultCommitBatch of them are
// waiting, when the oldest has waited DefaultCommitWindow, or when someone
// needs them on disk (Record, Flush, Close). A process that dies loses at
// most that window of records; the events they record carry deterministic
// ids, so the next run's inserts answer 409 and are adopted, not
// duplicated. The queue is shared by every subscription of the process,
// so a thousand subscriptions writing at once share commits too.
const (
	DefaultCommitWindow = 50 * time.Millisecond
	DefaultCommitBatch  = 100
	// maxQueued bounds the changes waiting to be committed: Queue waits
	// for room beyond it, so a stalled disk slows the writers down instead
	// of filling memory.
	maxQueued = 10_000
)

// ErrClosed is returned for changes handed to a closed store.
var ErrClosed = errors.New("store: closed")

// entry is one group of changes that land together.
type entry struct {
	sub     string
	changes []calsyncd.Change
	at      int64 // ms: when it was queued, for updated_at and rejections' at
	queued  time.Time
	// done, for a Record, receives the group's outcome.
	done chan error
}

type journal struct {
	s      *Store
	window time.Duration
	batch  int

	mu      sync.Mutex
	queue   []*entry
	changes int    // changes in queue
	seq     uint64 // entries ever queued
	settled uint64 // entries committed or failed, in queue order
	// failed is the first error of each subscription's queued changes
	// since its last Flush.
	failed map[string]error
	// progress is closed and replaced whenever entries settle.
	progress chan struct{}
	urgent   bool // someone waits: commit without waiting for the window
	closing  bool
	kick     chan struct{}
	exited   chan struct{}
}

func newJournal(s *Store, window time.Duration, batch int) *journal {
	j := &journal{s: s, window: window, batch: batch, failed: map[string]error{},
		progress: make(chan struct{}), kick: make(chan struct{}, 1), exited: make(chan struct{})}
	go j.run()
	return j
}

func (j *journal) wake() {
	select {
	case j.kick <- struct{}{}:
	default:
	}
}

// add queues an entry (j.mu held), waiting for room when the queue is
// full.
func (j *journal) add(e *entry) error {
	for j.changes >= maxQueued && !j.closing {
		j.urgent = true
		j.wake()
		ch := j.progress
		j.mu.Unlock()
		<-ch
		j.mu.Lock()
	}
	if j.closing {
		return ErrClosed
	}
	e.queued = time.Now()
	e.at = ms(j.s.Now())
	j.queue = append(j.queue, e)
	j.changes += len(e.changes)
	j.seq++
	if len(j.queue) == 1 || j.changes >= j.batch || e.done != nil {
		if e.done != nil {
			j.urgent = true
		}
		j.wake()
	}
	return nil
}

// Queue hands changes to the group commit and returns at once; Flush waits
// for them. It fails when an earlier change of the subscription could not
// be committed (the error stays until Flush reports it).
func (s *Store) Queue(sub string, changes ...calsyncd.Change) error {
	if len(changes) == 0 {
		return nil
	}
	j := s.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.failed[sub]; err != nil {
		return err
	}
	return j.add(&entry{sub: sub, changes: changes})
}

// Record commits changes in one transaction (with whatever else is queued)
// and returns when they are on disk.
func (s *Store) Record(ctx context.Context, sub string, changes ...calsyncd.Change) error {
	if len(changes) == 0 {
		return nil
	}
	e := &entry{sub: sub, changes: changes, done: make(chan error, 1)}
	j := s.journal
	j.mu.Lock()
	err := j.add(e)
	j.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case err := <-e.done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("store: record changes of %s: %w", sub, context.Cause(ctx))
	}
}

// Flush waits until every change queued so far is committed, and reports
// (once) the first of the subscription's changes that could not be.
func (s *Store) Flush(ctx context.Context, sub string) error {
	j := s.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	target := j.seq
	for j.settled < target {
		j.urgent = true
		j.wake()
		ch := j.progress
		j.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			j.mu.Lock()
			return fmt.Errorf("store: flush: %w", context.Cause(ctx))
		}
		j.mu.Lock()
	}
	err := j.failed[sub]
	delete(j.failed, sub)
	return err
}

// close commits what is queued and stops the committer.
func (j *journal) close() error {
	j.mu.Lock()
	if j.closing {
		j.mu.Unlock()
		<-j.exited
		return nil
	}
	j.closing = true
	j.wake()
	j.mu.Unlock()
	<-j.exited
	return nil
}

// run is the committer: it waits for changes, lets them gather for the
// window (or until a batch is full, or someone waits), and commits them.
func (j *journal) run() {
	defer close(j.exited)
	var timer *time.Timer
	for {
		j.mu.Lock()
		n, changes, urgent, closing := len(j.queue), j.changes, j.urgent, j.closing
		var wait time.Duration
		if n > 0 {
			wait = j.window - time.Since(j.queue[0].queued)
		}
		j.mu.Unlock()
		switch {
		case n == 0 && closing:
			return
		case n == 0:
			<-j.kick
			continue
		case !urgent && !closing && changes < j.batch && wait > 0:
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			select {
			case <-timer.C:
			case <-j.kick:
				timer.Stop()
			}
			continue
		}
		j.commitQueued()
	}
}

// commitQueued commits every queued entry in one transaction. If that
// fails, each entry is tried in a transaction of its own, so one bad group
// (a subscription deleted meanwhile) costs no other its records.
func (j *journal) commitQueued() {
	j.mu.Lock()
	batch := j.queue
	j.queue, j.changes, j.urgent = nil, 0, false
	j.mu.Unlock()
	errs := make([]error, len(batch))
	if err := j.s.commitEntries(batch); err != nil {
		if len(batch) == 1 {
			errs[0] = err
		} else {
			for i, e := range batch {
				errs[i] = j.s.commitEntries([]*entry{e})
			}
		}
	}
	j.mu.Lock()
	for i, e := range batch {
		if errs[i] != nil && e.done == nil && j.failed[e.sub] == nil {
			j.failed[e.sub] = errs[i]
		}
	}
	j.settled += uint64(len(batch))
	close(j.progress)
	j.progress = make(chan struct{})
	j.mu.Unlock()
	for i, e := range batch {
		if e.done != nil {
			e.done <- errs[i]
		}
	}
}

// commitEntries writes entries in one transaction. It does not use any
// caller's context: what Google has accepted must be recorded even during
// a shutdown.
func (s *Store) commitEntries(entries []*entry) error {
	ctx := context.Background()
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("store: record changes: %w", err)
	}
	defer tx.Rollback()
	stmts := changeStatements{s: s, tx: tx}
	defer stmts.close()
	for _, e := range entries {
		for _, c := range e.changes {
			if err := stmts.apply(ctx, e, c); err != nil {
				return fmt.Errorf("store: record changes of %s (%s): %w", e.sub, c.Key, err)
			}
		}
	}
	if err := s.commit(tx); err != nil {
		return fmt.Errorf("store: record changes: %w", err)
	}
	return nil
}

// changeStatements prepares each statement once per transaction.
type changeStatements struct {
	s        *Store
	tx       *sql.Tx
	prepared map[string]*sql.Stmt
}

const (
	putMappingSQL = `INSERT INTO mappings (subscription_id, uid, recurrence_id, event_id, generation, hash, etag, ends_at, fields, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (subscription_id, uid, recurrence_id) DO UPDATE SET
			event_id = excluded.event_id, generation = excluded.generation, hash = excluded.hash,
			etag = excluded.etag, ends_at = excluded.ends_at, fields = excluded.fields, updated_at = excluded.updated_at`
	deleteMappingSQL = `DELETE FROM mappings WHERE subscription_id = ? AND uid = ? AND recurrence_id = ?`
	putRejectionSQL  = `INSERT INTO rejections (subscription_id, uid, recurrence_id, hash, reason, at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (subscription_id, uid, recurrence_id) DO UPDATE SET hash = excluded.hash, reason = excluded.reason, at = excluded.at`
	deleteRejectionSQL = `DELETE FROM rejections WHERE subscription_id = ? AND uid = ? AND recurrence_id = ?`
)

func (cs *changeStatements) exec(ctx context.Context, q string, args ...any) error {
	st, ok := cs.prepared[q]
	if !ok {
		var err error
		if st, err = cs.tx.PrepareContext(ctx, cs.s.rebind(q)); err != nil {
			return err
		}
		if cs.prepared == nil {
			cs.prepared = map[string]*sql.Stmt{}
		}
		cs.prepared[q] = st
	}
	_, err := st.ExecContext(ctx, args...)
	return err
}

func (cs *changeStatements) close() {
	for _, st := range cs.prepared {
		st.Close()
	}
}

func (cs *changeStatements) apply(ctx context.Context, e *entry, c calsyncd.Change) error {
	k := c.Key
	switch c.Kind {
	case calsyncd.SaveMapping:
		m := c.Mapping
		if err := cs.exec(ctx, putMappingSQL, e.sub, m.Key.UID, m.Key.RecurrenceID, m.EventID, m.Generation, m.Hash, m.ETag,
			ms(m.EndsAt), m.Fields, e.at, e.at); err != nil {
			return err
		}
		// A written event is no longer rejected.
		return cs.exec(ctx, deleteRejectionSQL, e.sub, m.Key.UID, m.Key.RecurrenceID)
	case calsyncd.DeleteMapping:
		return cs.exec(ctx, deleteMappingSQL, e.sub, k.UID, k.RecurrenceID)
	case calsyncd.SaveRejection:
		r := c.Rejection
		return cs.exec(ctx, putRejectionSQL, e.sub, r.Key.UID, r.Key.RecurrenceID, r.Hash, r.Reason, e.at)
	case calsyncd.DeleteRejection:
		return cs.exec(ctx, deleteRejectionSQL, e.sub, k.UID, k.RecurrenceID)
	}
	return fmt.Errorf("unknown change kind %d", c.Kind)
}
