// Package status shows operators what the daemon is doing: the status
// report (JSON, a table, an HTML page with a chart of recent runs), health,
// Prometheus metrics, and the HTTP server that serves them. Nothing it
// renders may carry a secret: feed URLs appear as scheme and host only.
package status

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
)

// Source is the state database as the report reads it.
type Source interface {
	Batch
	Subscriptions(ctx context.Context) ([]calsyncd.SubscriptionState, error)
	Runs(ctx context.Context, subscriptionID string, limit int) ([]calsyncd.Run, error)
	// RunChanges is what the store kept of a run's writes.
	RunChanges(ctx context.Context, runID int64) ([]calsyncd.RunChange, error)
	Accounts(ctx context.Context) ([]calsyncd.AccountState, error)
	Leases(ctx context.Context) ([]calsyncd.Lease, error)
	AlertStates(ctx context.Context) ([]calsyncd.AlertState, error)
	Ping(ctx context.Context) error
}

// Batch is the state database read many subscriptions at a time: a page
// of the report costs the same few queries whatever the number of
// subscriptions. Subscriptions are ordered by id, bytewise.
type Batch interface {
	SubscriptionIDs(ctx context.Context) ([]string, error)
	SubscriptionsAfter(ctx context.Context, after string, limit int) ([]calsyncd.SubscriptionState, error)
	SubscriptionsBefore(ctx context.Context, before string, limit int) ([]calsyncd.SubscriptionState, error)
	SubscriptionCounts(ctx context.Context) (calsyncd.SubscriptionCounts, error)
	MappingCounts(ctx context.Context, ids []string) (map[string]int, error)
	RejectionsOf(ctx context.Context, ids []string) (map[string][]calsyncd.Rejection, error)
	RecentRuns(ctx context.Context, ids []string, n int) (map[string][]calsyncd.Run, error)
}

// Scheduler is the running daemon, when there is one.
type Scheduler interface {
	Running() bool
	NextRun(id string) time.Time
}

// Pacer is a live account's pacer, when the daemon has one.
type Pacer struct {
	Account       string
	Spacing       time.Duration
	ThrottleUntil time.Time
	ThrottleClass calsyncd.ErrorClass
}

// Report is the whole status, as served by GET /status and printed by
// `calsyncd status --json`. Its schema is documented in the README.
type Report struct {
	GeneratedAt time.Time `json:"generated_at"`
	Daemon      bool      `json:"daemon"`
	// Total, States and Failing count every subscription, configured or
	// in the database, not only those of the page.
	Total   int                    `json:"total"`
	States  map[calsyncd.State]int `json:"states"`
	Failing int                    `json:"failing"`
	// Limit is the most subscriptions the page holds; NextAfter and
	// PrevBefore are the after and before of the next and previous
	// pages ("": there is none).
	Limit      int    `json:"limit"`
	NextAfter  string `json:"next_after"`
	PrevBefore string `json:"prev_before"`
	// Subscriptions are the page's, ordered by id.
	Subscriptions []Subscription `json:"subscriptions"`
	Accounts      []Account      `json:"accounts"`
	// UndeliveredAlerts are alerts no webhook took, until one of their
	// messages is delivered.
	UndeliveredAlerts []UndeliveredAlert `json:"undelivered_alerts"`
}

// UndeliveredAlert is an alert no webhook took: of what condition and
// subscription or account, since when and when last tried. The next run
// that sees the condition sends it again.
type UndeliveredAlert struct {
	Condition string    `json:"condition"`
	Subject   string    `json:"subject"`
	Since     time.Time `json:"since"`
	LastTried time.Time `json:"last_tried"`
}

// Subscription is one subscription's status.
type Subscription struct {
	ID                string         `json:"id"`
	Feed              string         `json:"feed"`
	Calendar          string         `json:"calendar"`
	Account           string         `json:"account"`
	State             calsyncd.State `json:"state"`
	ConsecutiveErrors int            `json:"consecutive_errors"`
	InConfig          bool           `json:"in_config"`
	EventsMapped      int            `json:"events_mapped"`
	HeldDeletes       int            `json:"held_deletes"`
	Rejected          []Rejection    `json:"rejected_events"`
	NextRun           *time.Time     `json:"next_run,omitempty"`
	LastRun           *Run           `json:"last_run,omitempty"`
	LastError         *ErrorReport   `json:"last_error,omitempty"`
	Notes             []string       `json:"notes"`
	// History is the last runs, oldest first, for the chart.
	History []Run `json:"-"`
	// EventsFiltered is how many of the feed's events the filters
	// excluded the last time a run read the feed.
	EventsFiltered int `json:"events_filtered"`
}

// Run is one run's summary.
type Run struct {
	ID          int64            `json:"id"`
	StartedAt   time.Time        `json:"started_at"`
	FinishedAt  *time.Time       `json:"finished_at,omitempty"`
	Outcome     calsyncd.Outcome `json:"outcome"`
	Created     int              `json:"created"`
	Updated     int              `json:"updated"`
	Deleted     int              `json:"deleted"`
	Unchanged   int              `json:"unchanged"`
	Deferred    int              `json:"deferred"`
	Failed      int              `json:"failed"`
	Rejected    int              `json:"rejected"`
	HeldDeletes int              `json:"held_deletes"`
	// Filtered is how many events the filters excluded in this run.
	Filtered int `json:"filtered"`
	// Repaired is how many of the run's updates wrote back an owned event
	// a person had edited in Google (found by a reconcile).
	Repaired int `json:"repaired"`
	// ErrorClass and Error are why a failed run failed (the page shows
	// them; the JSON has the subscription's last_error).
	ErrorClass calsyncd.ErrorClass `json:"-"`
	Error      string              `json:"-"`
}

// Writes is the number of successful writes of the run.
func (r Run) Writes() int { return r.Created + r.Updated + r.Deleted }

// Rejection is an event Google refused.
type Rejection struct {
	UID          string    `json:"uid"`
	RecurrenceID string    `json:"recurrence_id,omitempty"`
	Reason       string    `json:"reason"`
	At           time.Time `json:"at"`
}

// ErrorReport is the last error: its class and what to do about it.
type ErrorReport struct {
	Class   calsyncd.ErrorClass `json:"class"`
	Message string              `json:"message"`
	Detail  string              `json:"detail"`
}

// Account is one Google account's pacing state and which replica works
// on it.
type Account struct {
	Name          string              `json:"name"`
	SpacingMS     int64               `json:"pacer_spacing_ms"`
	ThrottleUntil *time.Time          `json:"throttle_window_until,omitempty"`
	ThrottleClass calsyncd.ErrorClass `json:"throttle_class,omitempty"`
	Lease         *Lease              `json:"lease,omitempty"`
}

// Lease is the replica holding an account's work.
type Lease struct {
	Owner     string    `json:"owner"`
	ExpiresAt time.Time `json:"expires_at"`
	// Expired leases belong to a replica that stopped; another takes the
	// account over.
	Expired bool `json:"expired"`
}

// historyLen is how many runs the page charts.
const historyLen = 48

// Page limits: how many subscriptions a page of GET /status and GET /
// holds unless asked (DefaultPageLimit), and at most (MaxPageLimit).
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 1000
)

// Page selects the subscriptions of a report: at most Limit of them, in
// order of id, from the first after After, or the last before Before (at
// most one of the two is set; neither: from the first).
type Page struct {
	Limit         int
	After, Before string
}

// Build assembles the whole report — every subscription, read
// MaxPageLimit at a time — from the database, the configuration and, when
// the daemon is running, its scheduler and pacers (nil otherwise).
func Build(ctx context.Context, src Source, cfg *config.Config, sched Scheduler, pacers []Pacer, now time.Time) (*Report, error) {
	ix, err := newIndex(ctx, src, cfg)
	if err != nil {
		return nil, err
	}
	rep := ix.report(sched, now)
	rep.Limit = len(ix.ids)
	for start := 0; start < len(ix.ids); start += MaxPageLimit {
		end := min(start+MaxPageLimit, len(ix.ids))
		subs, err := ix.subscriptions(ctx, src, sched, start, end, false)
		if err != nil {
			return nil, err
		}
		rep.Subscriptions = append(rep.Subscriptions, subs...)
	}
	return rep, ix.finish(ctx, src, rep, pacers, now)
}

// BuildPage assembles one page of the report: the subscriptions p
// selects, with the counts of them all.
func BuildPage(ctx context.Context, src Source, cfg *config.Config, sched Scheduler, pacers []Pacer, now time.Time, p Page) (*Report, error) {
	if p.Limit <= 0 {
		p.Limit = DefaultPageLimit
	}
	ix, err := newIndex(ctx, src, cfg)
	if err != nil {
		return nil, err
	}
	rep := ix.report(sched, now)
	rep.Limit = p.Limit
	var start, end int
	if p.Before != "" {
		end = sort.SearchStrings(ix.ids, p.Before)
		start = max(0, end-p.Limit)
	} else {
		start = sort.Search(len(ix.ids), func(i int) bool { return ix.ids[i] > p.After })
		end = min(len(ix.ids), start+p.Limit)
	}
	if start < end {
		if start > 0 {
			rep.PrevBefore = ix.ids[start]
		}
		if end < len(ix.ids) {
			rep.NextAfter = ix.ids[end-1]
		}
	}
	if rep.Subscriptions, err = ix.subscriptions(ctx, src, sched, start, end, p.Before != ""); err != nil {
		return nil, err
	}
	return rep, ix.finish(ctx, src, rep, pacers, now)
}

// buildOne is the report of subscription id alone (ErrNoSubscription when
// neither the configuration nor the database knows it).
func buildOne(ctx context.Context, src Source, cfg *config.Config, sched Scheduler, pacers []Pacer, now time.Time, id string) (*Report, error) {
	ix, err := newIndex(ctx, src, cfg)
	if err != nil {
		return nil, err
	}
	i, found := slices.BinarySearch(ix.ids, id)
	if !found {
		return nil, ErrNoSubscription
	}
	rep := ix.report(sched, now)
	rep.Limit = 1
	if rep.Subscriptions, err = ix.subscriptions(ctx, src, sched, i, i+1, false); err != nil {
		return nil, err
	}
	if len(rep.Subscriptions) == 0 {
		return nil, ErrNoSubscription
	}
	return rep, ix.finish(ctx, src, rep, pacers, now)
}

// index is every subscription's id, configured or in the database, in
// order, and the counts of them: what a page needs to know of those it
// does not show. It costs two queries and memory for the ids.
type index struct {
	cfg *config.Config
	// ids is every id in order; configured is the configuration's
	// subscriptions by id.
	ids        []string
	configured map[string]config.Subscription
	counts     calsyncd.SubscriptionCounts
}

func newIndex(ctx context.Context, src Source, cfg *config.Config) (*index, error) {
	stored, err := src.SubscriptionIDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("status: list subscriptions: %w", err)
	}
	counts, err := src.SubscriptionCounts(ctx)
	if err != nil {
		return nil, fmt.Errorf("status: count subscriptions: %w", err)
	}
	ix := &index{cfg: cfg, configured: make(map[string]config.Subscription, len(cfg.Subscriptions)), counts: counts}
	if ix.counts.States == nil {
		ix.counts.States = map[calsyncd.State]int{}
	}
	ix.counts.Total = len(stored)
	inStore := make(map[string]bool, len(stored))
	for _, id := range stored {
		inStore[id] = true
	}
	ix.ids = stored
	for _, s := range cfg.Subscriptions {
		ix.configured[s.ID] = s
		if !inStore[s.ID] {
			// Configured, never run: active, as its card says.
			inStore[s.ID] = true
			ix.ids = append(ix.ids, s.ID)
			ix.counts.Total++
			ix.counts.States[calsyncd.StateActive]++
		}
	}
	if len(ix.ids) > len(stored) {
		slices.Sort(ix.ids)
	}
	return ix, nil
}

// report is a report of no subscription yet, with the counts of all.
func (ix *index) report(sched Scheduler, now time.Time) *Report {
	states := map[calsyncd.State]int{calsyncd.StateActive: 0, calsyncd.StateError: 0}
	for s, n := range ix.counts.States {
		states[s] += n
	}
	return &Report{GeneratedAt: now.UTC(), Daemon: sched != nil && sched.Running(), Total: ix.counts.Total, States: states,
		Failing: ix.counts.Failing, Subscriptions: []Subscription{}, Accounts: []Account{}}
}

// finish adds the accounts and the undelivered alerts.
func (ix *index) finish(ctx context.Context, src Source, rep *Report, pacers []Pacer, now time.Time) error {
	var err error
	if rep.Accounts, err = accountStatus(ctx, src, ix.cfg, pacers, now); err != nil {
		return err
	}
	rep.UndeliveredAlerts, err = undeliveredAlerts(ctx, src)
	return err
}

// subscriptions is the status of ids[start:end], read in a query of each
// kind: the page's rows (the first after the one before start, or, for a
// page read backwards, the last before the one at end), their mappings,
// rejections and recent runs.
func (ix *index) subscriptions(ctx context.Context, src Source, sched Scheduler, start, end int, backwards bool) ([]Subscription, error) {
	out := []Subscription{}
	if start >= end {
		return out, nil
	}
	first, last := ix.ids[start], ix.ids[end-1]
	var (
		rows []calsyncd.SubscriptionState
		err  error
	)
	if backwards && end < len(ix.ids) {
		rows, err = src.SubscriptionsBefore(ctx, ix.ids[end], end-start)
	} else {
		after := ""
		if start > 0 {
			after = ix.ids[start-1]
		}
		rows, err = src.SubscriptionsAfter(ctx, after, end-start)
	}
	if err != nil {
		return nil, fmt.Errorf("status: read subscriptions: %w", err)
	}
	known := make(map[string]calsyncd.SubscriptionState, len(rows))
	var ids []string
	for _, st := range rows {
		if st.ID >= first && st.ID <= last {
			known[st.ID] = st
			ids = append(ids, st.ID)
		}
	}
	var (
		mapped   map[string]int
		rejected map[string][]calsyncd.Rejection
		runs     map[string][]calsyncd.Run
	)
	if len(ids) > 0 {
		if mapped, err = src.MappingCounts(ctx, ids); err != nil {
			return nil, fmt.Errorf("status: count mappings: %w", err)
		}
		if rejected, err = src.RejectionsOf(ctx, ids); err != nil {
			return nil, fmt.Errorf("status: read rejections: %w", err)
		}
		if runs, err = src.RecentRuns(ctx, ids, historyLen); err != nil {
			return nil, fmt.Errorf("status: read runs: %w", err)
		}
	}
	for _, id := range ix.ids[start:end] {
		st, seen := known[id]
		sub, inConfig := ix.configured[id]
		if !seen && !inConfig {
			continue // deleted since the ids were read
		}
		s := subscriptionStatus(sched, id, sub, inConfig)
		if seen {
			fromStore(&s, st, mapped[id], rejected[id], runs[id])
		}
		finishStatus(&s, sched, inConfig)
		out = append(out, s)
	}
	return out, nil
}

func undeliveredAlerts(ctx context.Context, src Source) ([]UndeliveredAlert, error) {
	states, err := src.AlertStates(ctx)
	if err != nil {
		return nil, err
	}
	out := []UndeliveredAlert{}
	for _, st := range states {
		if st.Condition != calsyncd.AlertUndelivered {
			continue
		}
		cond, subject, _ := strings.Cut(st.Subject, ":")
		out = append(out, UndeliveredAlert{Condition: cond, Subject: subject, Since: st.Since, LastTried: st.NotifiedAt})
	}
	return out, nil
}

// subscriptionStatus is one subscription's status as configured.
func subscriptionStatus(sched Scheduler, id string, sub config.Subscription, inConfig bool) Subscription {
	s := Subscription{ID: id, InConfig: inConfig, State: calsyncd.StateActive, Rejected: []Rejection{}, Notes: []string{}}
	if inConfig {
		s.Feed, s.Calendar, s.Account = config.RedactURL(sub.URL), sub.Calendar, sub.AccountName()
	}
	return s
}

// finishStatus adds what the configuration and the scheduler say, after
// what the database remembers.
func finishStatus(s *Subscription, sched Scheduler, inConfig bool) {
	if !inConfig {
		s.Notes = append(s.Notes, "removed from the configuration; its events stay in Google unless sync.prune_on_remove is set")
	}
	if sched != nil {
		if t := sched.NextRun(s.ID); !t.IsZero() {
			s.NextRun = &t
		}
	}
	if s.HeldDeletes > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d deletes held by the mass-delete guard: run `calsyncd sync --allow-deletes %s` if the feed really lost these events", s.HeldDeletes, s.ID))
	}
}

// fromStore fills in what the database remembers of a subscription: its
// row, how many events it mapped, its rejections and its runs, newest
// first.
func fromStore(s *Subscription, st calsyncd.SubscriptionState, mapped int, rejs []calsyncd.Rejection, runs []calsyncd.Run) {
	s.Calendar, s.Account, s.State = st.Calendar, st.Account, st.State
	s.ConsecutiveErrors, s.HeldDeletes = st.ConsecutiveErrors, st.HeldDeletes
	s.EventsFiltered = st.Filtered
	s.Notes = append(s.Notes, st.Notes...)
	if st.LastErrorClass != "" {
		s.LastError = &ErrorReport{Class: st.LastErrorClass, Message: Explain(st.LastErrorClass), Detail: st.LastError}
	}
	s.EventsMapped = mapped
	for _, r := range rejs {
		s.Rejected = append(s.Rejected, Rejection{UID: r.Key.UID, RecurrenceID: r.Key.RecurrenceID, Reason: r.Reason, At: r.At})
	}
	for i := len(runs) - 1; i >= 0; i-- {
		s.History = append(s.History, RunOf(runs[i]))
	}
	if len(runs) > 0 {
		last := RunOf(runs[0])
		s.LastRun = &last
	}
	if !st.NextRunAt.IsZero() {
		t := st.NextRunAt
		s.NextRun = &t
	}
}

// accountStatus is every account's pacing state: configured, remembered
// in the database, live in the daemon's pacers, and its lease.
func accountStatus(ctx context.Context, src Source, cfg *config.Config, pacers []Pacer, now time.Time) ([]Account, error) {
	accounts := map[string]*Account{}
	for _, name := range cfg.AccountNames() {
		accounts[name] = &Account{Name: name, SpacingMS: cfg.Writer.Spacing.D().Milliseconds()}
	}
	stored, err := src.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range stored {
		acc := accounts[a.Name]
		if acc == nil {
			acc = &Account{Name: a.Name, SpacingMS: cfg.Writer.Spacing.D().Milliseconds()}
			accounts[a.Name] = acc
		}
		if a.Spacing > 0 {
			acc.SpacingMS = a.Spacing.Milliseconds()
		}
		if a.ThrottleUntil.After(now) {
			t := a.ThrottleUntil
			acc.ThrottleUntil, acc.ThrottleClass = &t, a.ThrottleClass
		}
	}
	for _, p := range pacers {
		acc := accounts[p.Account]
		if acc == nil {
			acc = &Account{Name: p.Account}
			accounts[p.Account] = acc
		}
		acc.SpacingMS = p.Spacing.Milliseconds()
		acc.ThrottleUntil, acc.ThrottleClass = nil, ""
		if p.ThrottleUntil.After(now) {
			t := p.ThrottleUntil
			acc.ThrottleUntil, acc.ThrottleClass = &t, p.ThrottleClass
		}
	}
	leases, err := src.Leases(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range leases {
		if acc := accounts[l.Account]; acc != nil {
			acc.Lease = &Lease{Owner: l.Owner, ExpiresAt: l.ExpiresAt, Expired: !l.HeldAt(now)}
		}
	}
	out := make([]Account, 0, len(accounts))
	for _, a := range accounts {
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// RunOf is a stored run as status shows it.
func RunOf(r calsyncd.Run) Run {
	out := Run{ID: r.ID, StartedAt: r.StartedAt, Outcome: r.Outcome, Created: r.Created, Updated: r.Updated, Deleted: r.Deleted,
		Unchanged: r.Unchanged, Deferred: r.Deferred, Failed: r.Failed, Rejected: r.Rejected, HeldDeletes: r.HeldDeletes,
		Filtered: r.Filtered, Repaired: r.Repaired, ErrorClass: r.ErrorClass, Error: r.Error}
	if !r.FinishedAt.IsZero() {
		t := r.FinishedAt
		out.FinishedAt = &t
	}
	return out
}

// Explain turns an error class into a sentence an operator can act on.
func Explain(class calsyncd.ErrorClass) string {
	switch class {
	case calsyncd.ClassAuth:
		return "Google refused the account's credentials or the calendar is not shared with it: check `calsyncd auth status`, the sharing of the calendar, or run `calsyncd auth login`."
	case calsyncd.ClassRateLimited:
		return "Google rate-limited the account; writes are deferred and picked up by the next run. Nothing to do unless it persists for days."
	case calsyncd.ClassUsageLimited:
		return "Google's Calendar usage limit made the account read-only for a while; writes wait for the lockout to end (usually hours)."
	case calsyncd.ClassTransient:
		return "Google answered with server errors or the connection broke; the writes are retried next run."
	case calsyncd.ClassFeedUnreachable:
		return "The feed server could not be reached (DNS, connection, TLS or timeout). Check the URL and the network."
	case calsyncd.ClassFeedRejected:
		return "The feed server refused the request (401/403/404/410): the feed's URL or its credentials may have changed."
	case calsyncd.ClassFeedUnavailable:
		return "The feed server is overloaded or failing (429/5xx); calsyncd retries later."
	case calsyncd.ClassFeedTooLarge:
		return "The feed is larger than feed.max_size; raise the limit if the feed is genuine."
	case calsyncd.ClassFeedOverLimit:
		return "The feed has more events, or expands into more single events, than limits.max_events or limits.max_instances_expanded allow; nothing was written or deleted. Raise the limit (for this subscription) if the feed is genuine."
	case calsyncd.ClassFeedInvalid:
		return "The feed did not answer with an iCalendar document (an HTML login page, an empty or truncated body). Nothing was deleted."
	}
	if class.IsFeed() {
		return "The feed could not be fetched or read."
	}
	return "An internal error stopped the run; see the daemon's log."
}
