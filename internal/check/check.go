// Package check answers "would this configuration work?" without writing
// anything: for each subscription it fetches the feed once and parses it,
// checks that the account gets a token, and that the calendar exists and
// the account may write to it — and says, for each problem, what to do. It
// writes nothing to Google and never opens the state database.
package check

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/googleauth"
)

// Fetcher fetches a feed.
type Fetcher interface {
	Fetch(ctx context.Context, req fetch.Request) (*fetch.Response, error)
}

// Checker checks subscriptions.
type Checker struct {
	Config  *config.Config
	Fetcher Fetcher
	// Auth is handed to googleauth.Load (its transport, its logger).
	Auth googleauth.Options
	// Now is the time the feed's window is measured from (default
	// time.Now).
	Now func() time.Time
	// Parallel bounds the subscriptions checked at once (default 4).
	Parallel int

	mu        sync.Mutex
	accounts  map[string]func() accountResult
	calendars map[[2]string]func() calendarResult
}

// Report is the outcome of a check: every subscription's result.
type Report struct {
	Subscriptions []Result `json:"subscriptions"`
}

// OK reports whether every subscription would work.
func (r Report) OK() bool {
	for _, s := range r.Subscriptions {
		if !s.OK {
			return false
		}
	}
	return true
}

// Result is what the check found for one subscription. OK is false when
// a run would fail; Problems say why and what to do, Notes what a run
// would get past but a person may want to know.
type Result struct {
	ID       string   `json:"id"`
	OK       bool     `json:"ok"`
	Problems []string `json:"problems"`
	Notes    []string `json:"notes"`
	Feed     Feed     `json:"feed"`
	Account  Account  `json:"account"`
	Calendar Calendar `json:"calendar"`
}

// Feed is what one fetch and parse of the feed found.
type Feed struct {
	// URL is the feed's scheme and host only.
	URL string `json:"url"`
	// Status is the HTTP status of the answer (0 for a file, or no answer).
	Status int `json:"status,omitempty"`
	Bytes  int `json:"bytes"`
	// Events are the events within the sync window; OutsideWindow those
	// outside it.
	Events        int `json:"events"`
	OutsideWindow int `json:"outside_window"`
	// Skipped are the events the parser left out, with its reason: the
	// first MaxSkips of them (a broken feed can skip tens of thousands);
	// SkippedTotal counts them all.
	Skipped      []Skip `json:"skipped"`
	SkippedTotal int    `json:"skipped_total"`
	// UnresolvedZones are the time zones no IANA zone was found for.
	UnresolvedZones []string `json:"unresolved_zones"`
	// Warnings counts every parser warning (skipped events and zones
	// included).
	Warnings int `json:"warnings"`
}

// MaxSkips bounds Feed.Skipped, so that a feed with every event broken
// cannot make the report as large as the feed.
const MaxSkips = 100

// Skip is an event the parser left out.
type Skip struct {
	UID    string `json:"uid"`
	Reason string `json:"reason"`
}

// Account is what the check found of the subscription's Google account.
type Account struct {
	Name string `json:"name"`
	// Identity says who the account acts as (never a secret).
	Identity string `json:"identity"`
	// Token says whether it got an access token.
	Token string `json:"token"`
	OK    bool   `json:"ok"`
}

// Calendar is what the check found of the target calendar.
type Calendar struct {
	ID       string `json:"id"`
	Exists   bool   `json:"exists"`
	Summary  string `json:"summary,omitempty"`
	TimeZone string `json:"time_zone,omitempty"`
	// AccessRole is the account's role as Google reports it in an events
	// list ("" when it did not say).
	AccessRole string `json:"access_role,omitempty"`
	// Writable is "yes", "no" or "cannot tell".
	Writable string `json:"writable"`
}

// Writable values.
const (
	WritableYes        = "yes"
	WritableNo         = "no"
	WritableCannotTell = "cannot tell"
)

// problem is one reason a run would fail: what is wrong and what to do.
type problem struct{ what, do string }

func (p problem) String() string {
	if p.do == "" {
		return p.what
	}
	return p.what + " → " + p.do
}

// Run checks the subscriptions, several at once, and returns their
// results in the order given.
func (c *Checker) Run(ctx context.Context, subs []config.Subscription) Report {
	c.mu.Lock()
	if c.accounts == nil {
		c.accounts, c.calendars = map[string]func() accountResult{}, map[[2]string]func() calendarResult{}
	}
	c.mu.Unlock()
	parallel := c.Parallel
	if parallel <= 0 {
		parallel = 4
	}
	out := Report{Subscriptions: make([]Result, len(subs))}
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, sub := range subs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out.Subscriptions[i] = c.subscription(ctx, i, sub)
		})
	}
	wg.Wait()
	return out
}

// subscription checks one subscription: its feed, then its account and
// calendar (each checked once however many subscriptions share them).
func (c *Checker) subscription(ctx context.Context, index int, sub config.Subscription) Result {
	res := Result{ID: sub.ID, Problems: []string{}, Notes: []string{}}
	key := c.configKey(index, sub)
	var problems []problem
	res.Feed, problems, res.Notes = c.feed(ctx, sub, key)
	acct := c.account(ctx, sub.AccountName())
	res.Account = acct.Account
	problems = append(problems, acct.problems...)
	res.Calendar = Calendar{ID: sub.Calendar, Writable: WritableCannotTell}
	if acct.OK {
		cal := c.calendar(ctx, sub.AccountName(), sub.Calendar, acct, key)
		res.Calendar = cal.Calendar
		problems = append(problems, cal.problems...)
		res.Notes = append(res.Notes, cal.notes...)
	}
	for _, p := range problems {
		res.Problems = append(res.Problems, p.String())
	}
	res.OK = len(problems) == 0
	return res
}

// configKey names the subscription's key in the configuration file, for
// the advice ("fix subscriptions[2].url").
func (c *Checker) configKey(index int, sub config.Subscription) string {
	for i, s := range c.Config.Subscriptions {
		if s.ID == sub.ID {
			index = i
		}
	}
	return "subscriptions[" + strconv.Itoa(index) + "]"
}

func (c *Checker) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// requestTimeout bounds each request to Google.
func (c *Checker) requestTimeout() time.Duration {
	if d := c.Config.Writer.RequestTimeout.D(); d > 0 {
		return d
	}
	return 30 * time.Second
}

var _ Fetcher = (*fetch.Fetcher)(nil)

// statusText is an HTTP status as people read it.
func statusText(code int) string { return strconv.Itoa(code) + " " + http.StatusText(code) }
