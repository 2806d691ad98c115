// Package alert tells people, through webhooks, when calsyncd needs them:
// a subscription entered or left ERROR, its deletes are held or were
// released, an account's credentials are refused, an account is locked
// out by a usage limit. It listens to what each run settled on, sends one
// message per transition and at most a daily reminder while a condition
// lasts (remembered in the store, so a restart changes neither), and
// delivers in the background with retries and bounded queues, so a slow or
// dead receiver never delays a sync. Messages and logs carry no secret: no
// feed URL, header value or token, and of a webhook only its scheme and host.
package alert

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
)

// Event is what an alert announces.
type Event string

// Events, as the json format names them.
const (
	ErrorEntered    Event = "error_entered"
	ErrorCleared    Event = "error_cleared"
	DeletesHeld     Event = "deletes_held"
	DeletesReleased Event = "deletes_released"
	AuthFailed      Event = "auth_failed"
	UsageLimited    Event = "usage_limited"
	// FeedThrottled: a subscription's feed server has answered every
	// fetch with 429 for a day.
	FeedThrottled Event = "feed_throttled"
	// StraysLeft: a reconcile found events with the subscription's marks
	// that the database does not know it wrote and the feed no longer
	// has, and left them alone.
	StraysLeft Event = "strays_left"
)

// Events lists every event, for metrics and documentation.
var Events = []Event{ErrorEntered, ErrorCleared, DeletesHeld, DeletesReleased, AuthFailed, UsageLimited, FeedThrottled, StraysLeft}

// Message is one alert, as the json format posts it.
type Message struct {
	Event Event `json:"event"`
	// Subscription is "" for an account's alert.
	Subscription string    `json:"subscription"`
	Account      string    `json:"account"`
	Message      string    `json:"message"`
	At           time.Time `json:"at"`
	// Reminder: the condition was announced before and still lasts.
	Reminder bool `json:"reminder"`
	// Title is the one-line summary (ntfy's Title, slack's first line).
	Title string `json:"-"`
	// delivery is what becomes of the message's announcement when no
	// webhook took it.
	delivery *delivery
}

// delivery follows one message to every webhook it was queued for: when
// none took it, what was remembered of it is undone, so the next run
// announces it again rather than count it as sent (and a message any
// webhook took is never sent twice).
type delivery struct {
	mu        sync.Mutex
	pending   int
	delivered bool
	// undo runs once the last webhook failed, with no webhook having taken
	// the message; took once the first webhook took it.
	undo, took func()
}

// done records one webhook's result; the last one undoes the announcement
// if no webhook took the message.
func (d *delivery) done(ok bool) {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.pending--
	first := ok && !d.delivered
	d.delivered = d.delivered || ok
	last := d.pending == 0 && !d.delivered
	d.mu.Unlock()
	if first && d.took != nil {
		d.took()
	}
	if last && d.undo != nil {
		d.undo()
	}
}

// Memory keeps what was announced; *store.Store implements it.
type Memory interface {
	AlertState(ctx context.Context, condition, subject string) (calsyncd.AlertState, bool, error)
	SaveAlertState(ctx context.Context, st calsyncd.AlertState) error
	DeleteAlertState(ctx context.Context, condition, subject string) error
}

// Observer counts alerts by event and result (sent, failed, dropped).
type Observer interface {
	AlertSent(event, result string)
}

// Results an Observer is told.
const (
	ResultSent    = "sent"
	ResultFailed  = "failed"  // the receiver refused it, or retries ran out
	ResultDropped = "dropped" // a queue was full, or shutdown came first
)

// Options configure a Notifier.
type Options struct {
	// Config is read for each run's alerts: the webhooks (alerts:), the
	// mass-delete guard's confirm_runs for the messages, and the secrets
	// no message may carry. A reload takes effect at once.
	Config func() *config.Config
	// Memory keeps what was announced (required).
	Memory Memory
	Logger *slog.Logger
	// Client posts the alerts (default: 10 s per request). Whatever it
	// is, no redirect is followed and no Referer sent; a link-local or
	// metadata address is refused (unless the webhook has
	// allow_link_local) by the URL and, when Client has no Transport of
	// its own, by each address dialled.
	Client *http.Client
	// Resolver looks up webhooks' names, Dialer connects to their
	// addresses (defaults net.DefaultResolver and a 10 s connect
	// timeout); Dialer's Control, if any, runs once an address has been
	// allowed.
	Resolver Resolver
	Dialer   *net.Dialer
	Observer Observer
	// Now is the clock the reminders are timed by (default time.Now).
	Now func() time.Time
	// QueueSize bounds the runs waiting to be weighed and the alerts
	// waiting for each webhook (default 64).
	QueueSize int
	// MaxAttempts per alert and webhook (default 6); the waits between
	// them start at RetryBase and double up to RetryCap (default 2 s and
	// 5 min; a Retry-After from the receiver is a floor).
	MaxAttempts         int
	RetryBase, RetryCap time.Duration
	// RemindEvery is how long a lasting condition stays quiet before it is
	// announced again (default 24 h).
	RemindEvery time.Duration
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Dialer == nil {
		o.Dialer = defaultDialer()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 64
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 6
	}
	if o.RetryBase <= 0 {
		o.RetryBase = 2 * time.Second
	}
	if o.RetryCap < o.RetryBase {
		o.RetryCap = max(o.RetryBase, 5*time.Minute)
	}
	if o.RemindEvery <= 0 {
		o.RemindEvery = 24 * time.Hour
	}
	return o
}

// Notifier weighs what runs settled on and sends the alerts they call for.
// It implements subscription.Listener.
type Notifier struct {
	o    Options
	log  *slog.Logger
	runs chan calsyncd.Settled

	ctx    context.Context // cancelled when Close gives up waiting
	cancel context.CancelFunc
	done   chan struct{} // the weigher has stopped

	mu      sync.Mutex
	closed  bool
	senders map[string]*sender
	sending sync.WaitGroup
	// undelivered counts the alerts no webhook took (Undelivered).
	undelivered int
}

// Undelivered is how many alerts no webhook took since the notifier
// started; each is announced again by the next run that sees its
// condition.
func (n *Notifier) Undelivered() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.undelivered
}

// New starts a Notifier; Close stops it.
func New(o Options) *Notifier {
	o = o.withDefaults()
	n := &Notifier{o: o, log: o.Logger, runs: make(chan calsyncd.Settled, o.QueueSize),
		done: make(chan struct{}), senders: map[string]*sender{}}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	go n.weigh()
	return n
}

// Settled queues a settled run to be weighed; it never blocks. When the
// queue is full the run is dropped (logged): its conditions are weighed
// again at the subscription's next run.
func (n *Notifier) Settled(s calsyncd.Settled) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	select {
	case n.runs <- s:
	default:
		n.log.Warn("alerts: too many runs waiting to be weighed; this run's alerts are dropped", "subscription", s.Subscription)
	}
}

// Close stops taking runs, weighs those queued and waits for their alerts
// to be delivered (retries included) until ctx ends; then what is left is
// dropped, each with a log line.
func (n *Notifier) Close(ctx context.Context) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	close(n.runs)
	n.mu.Unlock()
	finished := make(chan struct{})
	go func() {
		<-n.done
		n.mu.Lock()
		for _, s := range n.senders {
			close(s.queue)
		}
		n.mu.Unlock()
		n.sending.Wait()
		close(finished)
	}()
	select {
	case <-finished:
		n.cancel()
		return nil
	case <-ctx.Done():
		n.cancel()
		<-finished
		return ctx.Err()
	}
}

// weigh turns settled runs into alerts, one run at a time, so that what
// is remembered of a condition is never raced.
func (n *Notifier) weigh() {
	defer close(n.done)
	for s := range n.runs {
		cfg := n.o.Config()
		if cfg == nil || len(cfg.Alerts) == 0 {
			// Nothing to tell anyone: remember nothing either, so a
			// webhook added later hears of what is wrong by then.
			continue
		}
		for _, m := range n.decide(cfg, s) {
			m.delivery.pending = len(cfg.Alerts)
			n.post(cfg, m)
		}
	}
}
