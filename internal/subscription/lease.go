package subscription

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// LeaseStore is the store's lease API: one holder per Google account, so one
// pacer spends each account's quota however many replicas run.
type LeaseStore interface {
	ClaimLease(ctx context.Context, account, owner string, ttl time.Duration) (calsyncd.Lease, bool, error)
	ExtendLease(ctx context.Context, account, owner string, ttl time.Duration) (calsyncd.Lease, error)
	TakeOverLease(ctx context.Context, account, from, owner string, ttl time.Duration) (calsyncd.Lease, bool, error)
	ReleaseLease(ctx context.Context, account, owner string) error
	ReleaseLeases(ctx context.Context, owner string) (int, error)
}

// ErrLeaseHeld is wrapped when another process holds an account's lease.
var ErrLeaseHeld = errors.New("subscription: another calsyncd process holds the account")

// LeaseHeldError is ErrLeaseHeld with the account and, when known, the
// process holding its lease.
type LeaseHeldError struct {
	Account string
	// Holder is the lease owner's identity (replica/pid/random), "" when
	// not known.
	Holder string
}

func (e *LeaseHeldError) Error() string {
	if e.Holder == "" {
		return fmt.Sprintf("%v %s", ErrLeaseHeld, e.Account)
	}
	return fmt.Sprintf("%v %s (%s)", ErrLeaseHeld, e.Account, e.Holder)
}

func (e *LeaseHeldError) Unwrap() error { return ErrLeaseHeld }

// errLeaseLost is the cause of a run cancelled because its lease lapsed.
var errLeaseLost = errors.New("subscription: the account's lease was lost")

// NewOwner names this process as a lease holder: the replica id (the
// CALSYNCD_REPLICA_ID environment variable, else the host name), the pid
// and a random part, so two processes never share an identity.
func NewOwner() string {
	id := os.Getenv("CALSYNCD_REPLICA_ID")
	if id == "" {
		id, _ = os.Hostname()
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", strings.ReplaceAll(id, "/", "_"), os.Getpid(), hex.EncodeToString(b[:]))
}

// ownerDead reports whether a lease holder is a process of this host that
// no longer exists, so its lease can be taken at once instead of at expiry.
// A holder on another host (or named by CALSYNCD_REPLICA_ID) is never
// presumed dead: only its lease's expiry frees its accounts.
func ownerDead(owner string) bool {
	parts := strings.Split(owner, "/")
	if len(parts) != 3 {
		return false
	}
	host, _ := os.Hostname()
	pid, err := strconv.Atoi(parts[1])
	if parts[0] != host || err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// LeaseKeeper holds this process's account leases: it claims them, renews
// them every third of their lifetime, and cancels the work of an account
// whose lease it loses (or can no longer renew in time).
type LeaseKeeper struct {
	store LeaseStore
	owner string
	ttl   time.Duration
	log   *slog.Logger

	mu   sync.Mutex
	held map[string]*heldLease
}

type heldLease struct {
	until  time.Time
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
}

// NewLeaseKeeper returns a keeper acting as owner.
func NewLeaseKeeper(st LeaseStore, owner string, ttl time.Duration, log *slog.Logger) *LeaseKeeper {
	if log == nil {
		log = slog.Default()
	}
	return &LeaseKeeper{store: st, owner: owner, ttl: ttl, log: log, held: map[string]*heldLease{}}
}

// Owner is the keeper's holder identity.
func (k *LeaseKeeper) Owner() string { return k.owner }

// margin is how long before its expiry a lease we could not renew is given
// up, so we stop writing before another replica may start.
func (k *LeaseKeeper) margin() time.Duration { return k.ttl / 4 }

// Acquire claims or renews the account's lease, taking it over at once from
// a holder that died on this host. It returns the current holder when
// another live process has it.
func (k *LeaseKeeper) Acquire(ctx context.Context, account string) (bool, calsyncd.Lease, error) {
	l, ok, err := k.store.ClaimLease(ctx, account, k.owner, k.ttl)
	if err != nil {
		return false, calsyncd.Lease{}, err
	}
	if !ok && l.Owner != "" && ownerDead(l.Owner) {
		var took bool
		if l2, took2, err := k.store.TakeOverLease(ctx, account, l.Owner, k.owner, k.ttl); err != nil {
			return false, calsyncd.Lease{}, err
		} else if took2 {
			k.log.Info("took over the lease of a process that died", "account", account, "from", l.Owner)
			l, took = l2, true
		}
		ok = took
	}
	if !ok {
		k.lost(account, "held by "+l.Owner, true)
		return false, l, nil
	}
	k.hold(account, l.ExpiresAt)
	return true, l, nil
}

// hold records a lease until `until` and arms its give-up timer.
func (k *LeaseKeeper) hold(account string, until time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	h := k.held[account]
	if h == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		h = &heldLease{ctx: ctx, cancel: cancel}
		k.held[account] = h
		k.log.Info("holding the account's lease", "account", account, "owner", k.owner)
	}
	h.until = until
	wait := time.Until(until) - k.margin()
	if h.timer != nil {
		h.timer.Stop()
	}
	h.timer = time.AfterFunc(max(wait, 0), func() { k.lost(account, "could not renew it in time", true) })
}

// lost forgets an account's lease and cancels its work.
func (k *LeaseKeeper) lost(account, why string, warn bool) {
	k.mu.Lock()
	h := k.held[account]
	delete(k.held, account)
	k.mu.Unlock()
	if h == nil {
		return
	}
	h.timer.Stop()
	h.cancel(errLeaseLost)
	if warn {
		k.log.Warn("lost the account's lease; its runs stop", "account", account, "reason", why)
	} else {
		k.log.Info("gave up the account's lease", "account", account, "reason", why)
	}
}

// Holds reports whether the keeper holds the account's lease.
func (k *LeaseKeeper) Holds(account string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.held[account]
	return ok
}

// Context is cancelled when the account's lease is lost; it is already
// cancelled when the lease is not held.
func (k *LeaseKeeper) Context(account string) context.Context {
	k.mu.Lock()
	defer k.mu.Unlock()
	if h, ok := k.held[account]; ok {
		return h.ctx
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errLeaseLost)
	return ctx
}

// renew extends every held lease and tries to claim the accounts not held.
func (k *LeaseKeeper) renew(ctx context.Context, accounts []string) {
	for _, a := range accounts {
		if k.Holds(a) {
			l, err := k.store.ExtendLease(ctx, a, k.owner, k.ttl)
			switch {
			case errors.Is(err, calsyncd.ErrLeaseLost):
				k.lost(a, "another replica took it", true)
			case err != nil:
				// The database is unreachable: keep writing until the
				// give-up timer says the lease may have lapsed.
				k.log.Warn("cannot renew the account's lease", "account", a, "error", err)
			default:
				k.hold(a, l.ExpiresAt)
			}
			continue
		}
		if _, _, err := k.Acquire(ctx, a); err != nil {
			k.log.Warn("cannot claim the account's lease", "account", a, "error", err)
		}
	}
}

// Keep renews and claims leases for the accounts every third of the lease's
// lifetime until ctx ends.
func (k *LeaseKeeper) Keep(ctx context.Context, accounts func() []string) {
	t := time.NewTicker(k.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			k.renew(ctx, accounts())
		}
	}
}

// Release gives every lease back so other replicas need not wait.
func (k *LeaseKeeper) Release(ctx context.Context) {
	k.mu.Lock()
	accounts := make([]string, 0, len(k.held))
	for a := range k.held {
		accounts = append(accounts, a)
	}
	k.mu.Unlock()
	for _, a := range accounts {
		k.lost(a, "released", false)
	}
	if n, err := k.store.ReleaseLeases(ctx, k.owner); err != nil {
		k.log.Warn("cannot release leases; they expire on their own", "error", err)
	} else if n > 0 {
		k.log.Info("released account leases", "count", n)
	}
}

// Bind derives a run's context that also ends when the account's lease is
// lost (it is cancelled at once if the lease is not held).
func (k *LeaseKeeper) Bind(parent context.Context, account string) (context.Context, context.CancelFunc) {
	lease := k.Context(account)
	ctx, cancel := context.WithCancelCause(parent)
	stop := context.AfterFunc(lease, func() { cancel(context.Cause(lease)) })
	return ctx, func() { stop(); cancel(nil) }
}
