package gcalwriter

import (
	"context"
	"slices"
	"strings"
	"sync"

	calendar "google.golang.org/api/calendar/v3"
)

// Open builds the Google client of an account: the service, and the user
// whose per-user quota its requests are charged to ("" when none: no
// domain-wide delegation).
type Open func(ctx context.Context, account string) (svc *calendar.Service, quotaUser string, err error)

// Pool holds one Writer per Google account. Google's quota is per user, so
// every subscription that writes as an account must share its writer, and
// with it the account's pacer and throttle window; the pool is where that
// rule lives. A writer is made on first use, so an account whose
// credentials are broken fails its own subscriptions alone (and is tried
// again next time).
type Pool struct {
	open    Open
	options func(account string) Options

	mu      sync.Mutex
	writers map[string]*Writer
}

// NewPool returns a pool that opens accounts with open and configures
// their writers with options (the pool sets Account and QuotaUser).
func NewPool(open Open, options func(account string) Options) *Pool {
	return &Pool{open: open, options: options, writers: map[string]*Writer{}}
}

// Writer returns the account's writer, making it on first use.
func (p *Pool) Writer(ctx context.Context, account string) (*Writer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w, ok := p.writers[account]; ok {
		return w, nil
	}
	svc, quotaUser, err := p.open(ctx, account)
	if err != nil {
		return nil, err
	}
	o := p.options(account)
	o.Account, o.QuotaUser = account, quotaUser
	w := New(svc, o)
	p.writers[account] = w
	return w, nil
}

// States reports the pacing and throttling of every account with a
// writer, by account name.
func (p *Pool) States() []AccountStatus {
	p.mu.Lock()
	ws := make([]*Writer, 0, len(p.writers))
	for _, w := range p.writers {
		ws = append(ws, w)
	}
	p.mu.Unlock()
	out := make([]AccountStatus, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.State())
	}
	slices.SortFunc(out, func(a, b AccountStatus) int { return strings.Compare(a.Account, b.Account) })
	return out
}

// Retain drops the writers of the accounts keep rejects (their settings
// changed on a reload), so the next use makes them anew. Batches already
// running on a dropped writer finish on it.
func (p *Pool) Retain(keep func(account string) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for name := range p.writers {
		if !keep(name) {
			delete(p.writers, name)
		}
	}
}
