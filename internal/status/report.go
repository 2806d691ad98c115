// Package status shows operators what the daemon is doing: the status
// report (JSON, a table, an HTML page with a chart of recent runs), health,
// Prometheus metrics, and the HTTP server that serves them. Nothing it
// renders may carry a secret: feed URLs appear as scheme and host only.
package status

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
)

// Source is the state database as the report reads it.
type Source interface {
	Subscriptions(ctx context.Context) ([]calsyncd.SubscriptionState, error)
	Runs(ctx context.Context, subscriptionID string, limit int) ([]calsyncd.Run, error)
	// RunChanges is what the store kept of a run's writes.
	RunChanges(ctx context.Context, runID int64) ([]calsyncd.RunChange, error)
	CountMappings(ctx context.Context, subscriptionID string) (int, error)
	Rejections(ctx context.Context, subscriptionID string) ([]calsyncd.Rejection, error)
	Accounts(ctx context.Context) ([]calsyncd.AccountState, error)
	Leases(ctx context.Context) ([]calsyncd.Lease, error)
	AlertStates(ctx context.Context) ([]calsyncd.AlertState, error)
	Ping(ctx context.Context) error
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
	GeneratedAt   time.Time      `json:"generated_at"`
	Daemon        bool           `json:"daemon"`
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

// Build assembles the report from the database, the configuration and, when
// the daemon is running, its scheduler and pacers (nil otherwise).
func Build(ctx context.Context, src Source, cfg *config.Config, sched Scheduler, pacers []Pacer, now time.Time) (*Report, error) {
	rep := &Report{GeneratedAt: now.UTC(), Daemon: sched != nil && sched.Running(), Subscriptions: []Subscription{}, Accounts: []Account{}}
	states, err := src.Subscriptions(ctx)
	if err != nil {
		return nil, err
	}
	known := map[string]calsyncd.SubscriptionState{}
	for _, st := range states {
		known[st.ID] = st
	}
	ids := map[string]bool{}
	var order []string
	for _, s := range cfg.Subscriptions {
		ids[s.ID] = true
		order = append(order, s.ID)
	}
	for _, st := range states {
		if !ids[st.ID] {
			order = append(order, st.ID)
		}
	}
	for _, id := range order {
		st, seen := known[id]
		s, err := subscriptionStatus(ctx, src, cfg, sched, id, st, seen)
		if err != nil {
			return nil, err
		}
		rep.Subscriptions = append(rep.Subscriptions, s)
	}
	if rep.Accounts, err = accountStatus(ctx, src, cfg, pacers, now); err != nil {
		return nil, err
	}
	if rep.UndeliveredAlerts, err = undeliveredAlerts(ctx, src); err != nil {
		return nil, err
	}
	return rep, nil
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

// subscriptionStatus is one subscription's status: as configured, as the
// database remembers it (seen), and as the scheduler plans it.
func subscriptionStatus(ctx context.Context, src Source, cfg *config.Config, sched Scheduler, id string,
	st calsyncd.SubscriptionState, seen bool) (Subscription, error) {
	sub, inConfig := cfg.Subscription(id)
	s := Subscription{ID: id, InConfig: inConfig, State: calsyncd.StateActive, Rejected: []Rejection{}, Notes: []string{}}
	if inConfig {
		s.Feed, s.Calendar, s.Account = config.RedactURL(sub.URL), sub.Calendar, sub.AccountName()
	}
	if seen {
		if err := fromStore(ctx, src, &s, st); err != nil {
			return s, err
		}
	}
	if !inConfig {
		s.Notes = append(s.Notes, "removed from the configuration; its events stay in Google unless sync.prune_on_remove is set")
	}
	if sched != nil {
		if t := sched.NextRun(id); !t.IsZero() {
			s.NextRun = &t
		}
	}
	if s.HeldDeletes > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d deletes held by the mass-delete guard: run `calsyncd sync --allow-deletes %s` if the feed really lost these events", s.HeldDeletes, id))
	}
	return s, nil
}

// fromStore fills in what the database remembers of a subscription.
func fromStore(ctx context.Context, src Source, s *Subscription, st calsyncd.SubscriptionState) error {
	s.Calendar, s.Account, s.State = st.Calendar, st.Account, st.State
	s.ConsecutiveErrors, s.HeldDeletes = st.ConsecutiveErrors, st.HeldDeletes
	s.EventsFiltered = st.Filtered
	s.Notes = append(s.Notes, st.Notes...)
	if st.LastErrorClass != "" {
		s.LastError = &ErrorReport{Class: st.LastErrorClass, Message: Explain(st.LastErrorClass), Detail: st.LastError}
	}
	var err error
	if s.EventsMapped, err = src.CountMappings(ctx, st.ID); err != nil {
		return err
	}
	rejs, err := src.Rejections(ctx, st.ID)
	if err != nil {
		return err
	}
	for _, r := range rejs {
		s.Rejected = append(s.Rejected, Rejection{UID: r.Key.UID, RecurrenceID: r.Key.RecurrenceID, Reason: r.Reason, At: r.At})
	}
	runs, err := src.Runs(ctx, st.ID, historyLen)
	if err != nil {
		return err
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
	return nil
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
