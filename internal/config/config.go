// Package config loads calsyncd's YAML configuration: strict keys, ${VAR}
// expansion for secrets, defaults, and validation errors that name the file,
// the line and the key.
package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// DefaultAccount is the name of the account described by the top-level
// `google:` block.
const DefaultAccount = "default"

// Config is the whole configuration file.
type Config struct {
	// Path is the file the configuration was read from ("" when built in code).
	Path string `yaml:"-"`
	// Files are every file the configuration was read from: Path, then
	// each file include: names, in the order their subscriptions follow
	// the main file's.
	Files []string `yaml:"-"`
	// spans say which file each subscription is written in.
	spans []span
	// byID finds a subscription by id (nil in a Config not parsed: then
	// Subscription scans).
	byID *subscriptionIndex
	// Warnings are what is valid but probably a mistake, in file order.
	Warnings []Warning `yaml:"-"`

	StateDir string `yaml:"state_dir"`
	// Owner names this installation in its events' marks and ids
	// (calsyncd.Owner); "" takes the store's, else HostOwner.
	Owner         string         `yaml:"owner"`
	Listen        string         `yaml:"listen"`
	Schedule      string         `yaml:"schedule"`
	Log           Log            `yaml:"log"`
	Status        Status         `yaml:"status"`
	Store         Store          `yaml:"store"`
	Google        Account        `yaml:"google"`
	Accounts      []Account      `yaml:"accounts"`
	Writer        Writer         `yaml:"writer"`
	Feed          Feed           `yaml:"feed"`
	Window        Window         `yaml:"window"`
	Limits        Limits         `yaml:"limits"`
	Sync          Sync           `yaml:"sync"`
	Subscriptions []Subscription `yaml:"subscriptions"`
	// Include names more files of subscriptions (include.go).
	Include []string `yaml:"include"`
	Alerts  []Alert  `yaml:"alerts"`
	// Defaults are the presentation keys of every subscription that does
	// not set them.
	Defaults Presentation `yaml:"defaults"`
}

// Log configures log/slog.
type Log struct {
	Format string `yaml:"format"` // text | json
	Level  string `yaml:"level"`  // debug | info | warn | error
}

// Status configures the status endpoint.
type Status struct {
	// Token is the bearer token required on every request; mandatory when
	// Listen is not a loopback address.
	Token string `yaml:"token"`
	// AllowedHosts are more names the endpoint answers to (a reverse
	// proxy's, or this machine's when listening on every address); loopback
	// names and addresses and listen's host always pass.
	AllowedHosts []string `yaml:"allowed_hosts"`
}

// Store selects the state database.
type Store struct {
	Driver string `yaml:"driver"` // sqlite | postgres
	DSN    string `yaml:"dsn"`    // sqlite: a file path (default <state_dir>/calsyncd.db)
	// LeaseTTL is how long a replica keeps an account's work after it stops
	// heartbeating (the visibility timeout).
	LeaseTTL Duration `yaml:"lease_ttl"`
}

// Account is one Google identity the daemon writes as.
type Account struct {
	Name            string `yaml:"name"`
	CredentialsFile string `yaml:"credentials_file"`
	TokenFile       string `yaml:"token_file"`
	Impersonate     string `yaml:"impersonate"`
	// Endpoint overrides the Calendar API base URL (an emulator). It is only
	// read from the top-level google block and applies to every account.
	Endpoint string `yaml:"endpoint"`
}

// Writer configures the paced Google writer (per account).
type Writer struct {
	Concurrency       int      `yaml:"concurrency"`
	Spacing           Duration `yaml:"spacing"`
	MaxSpacing        Duration `yaml:"max_spacing"`
	MaxAttempts       int      `yaml:"max_attempts"`
	MaxRetryWait      Duration `yaml:"max_retry_wait"`
	BackfillShare     float64  `yaml:"backfill_share"`
	BackfillThreshold int      `yaml:"backfill_threshold"`
	RequestTimeout    Duration `yaml:"request_timeout"`
	// ThrottleWindow is how long an account's writes are deferred after a
	// rate limit spent a write's retries, doubling to ThrottleWindowMax.
	ThrottleWindow    Duration `yaml:"throttle_window"`
	ThrottleWindowMax Duration `yaml:"throttle_window_max"`
	// RetryBase and RetryCap shape the wait before a write is sent again:
	// RetryBase doubling with each retry, up to RetryCap (a Retry-After
	// from Google is a floor).
	RetryBase Duration `yaml:"retry_base"`
	RetryCap  Duration `yaml:"retry_cap"`
}

// writerOf is the writer block for the writer's limits.
func writerOf(l calsyncd.WriterLimits) Writer {
	return Writer{
		Concurrency: l.Concurrency, Spacing: Duration(l.Spacing), MaxSpacing: Duration(l.MaxSpacing),
		MaxAttempts: l.MaxAttempts, MaxRetryWait: Duration(l.MaxRetryWait),
		BackfillShare: l.BackfillShare, BackfillThreshold: l.BackfillThreshold, RequestTimeout: Duration(l.RequestTimeout),
		ThrottleWindow: Duration(l.RateWindow), ThrottleWindowMax: Duration(l.RateWindowCap),
		RetryBase: Duration(l.RetryBase), RetryCap: Duration(l.RetryCap),
	}
}

// Limits are the writer's limits as configured (what the block has no
// key for keeps its default).
func (w Writer) Limits() calsyncd.WriterLimits {
	l := calsyncd.DefaultWriterLimits()
	l.Concurrency, l.Spacing, l.MaxSpacing = w.Concurrency, w.Spacing.D(), w.MaxSpacing.D()
	l.MaxAttempts, l.MaxRetryWait = w.MaxAttempts, w.MaxRetryWait.D()
	l.BackfillShare, l.BackfillThreshold, l.RequestTimeout = w.BackfillShare, w.BackfillThreshold, w.RequestTimeout.D()
	l.RateWindow, l.RateWindowCap = w.ThrottleWindow.D(), w.ThrottleWindowMax.D()
	l.RetryBase, l.RetryCap = w.RetryBase.D(), w.RetryCap.D()
	return l
}

// Feed configures fetching and parsing of feeds.
type Feed struct {
	MaxSize        ByteSize `yaml:"max_size"`
	Timeout        Duration `yaml:"timeout"`
	ConnectTimeout Duration `yaml:"connect_timeout"`
	// TimeZone resolves floating times when the feed names no X-WR-TIMEZONE.
	TimeZone string `yaml:"time_zone"`
}

// Window bounds which events are mirrored, relative to now. Zero means
// unbounded; past: now (PastNow) means future events only.
type Window struct {
	Past   Duration `yaml:"past"`
	Future Duration `yaml:"future"`
	// PastNow: window.past is now, the events under way or to come
	// (Past is 0). Read the past bound through PastReach.
	PastNow bool `yaml:"-"`
}

// Limits bound what one feed may cost per run. A feed over a limit is
// refused whole (a recorded failure: nothing written, nothing deleted).
// In a subscription, a key left out (0) takes the top-level value.
type Limits struct {
	// MaxEvents bounds the feed's events within the window.
	MaxEvents int `yaml:"max_events"`
	// MaxInstancesExpanded bounds the occurrences written as single events
	// (series Google cannot hold as recurring, e.g. FREQ=SECONDLY).
	MaxInstancesExpanded int `yaml:"max_instances_expanded"`
	// FilterTime bounds the time one pass may spend matching its
	// subscription's filters.
	FilterTime Duration `yaml:"filter_time"`
}

// Sync configures the subscription lifecycle.
type Sync struct {
	ErrorThreshold    int         `yaml:"error_threshold"`
	ErrorMaxInterval  Duration    `yaml:"error_max_interval"`
	ReconcileInterval Duration    `yaml:"reconcile_interval"`
	PruneOnRemove     bool        `yaml:"prune_on_remove"`
	ShutdownTimeout   Duration    `yaml:"shutdown_timeout"`
	DeleteGuard       DeleteGuard `yaml:"delete_guard"`
	Retention         Retention   `yaml:"retention"`
}

// Retention bounds the history of runs the database keeps: runs older
// than MaxAge (0: no age limit) and beyond each subscription's MaxRuns
// newest are pruned; a subscription's newest run is always kept.
type Retention struct {
	MaxAge  Duration `yaml:"max_age"`
	MaxRuns int      `yaml:"max_runs"`
}

// DeleteGuard holds deletes that look like a broken feed rather than a change.
type DeleteGuard struct {
	MinDeletes  int     `yaml:"min_deletes"`
	MaxFraction float64 `yaml:"max_fraction"`
	ConfirmRuns int     `yaml:"confirm_runs"`
	// Period is how long the high-water mark of mapped events is kept: a
	// feed is weighed against the most it held over this period, not
	// only against its last run (0: the last run only).
	Period Duration `yaml:"period"`
}

// Subscription is one feed mirrored into one Google calendar.
type Subscription struct {
	ID       string `yaml:"id"`
	URL      string `yaml:"url"`
	Calendar string `yaml:"calendar"`
	Account  string `yaml:"account"`
	// Headers are sent with every fetch (values may hold ${VAR} secrets).
	Headers   map[string]string `yaml:"headers"`
	BasicAuth *BasicAuth        `yaml:"basic_auth"`
	// TimeZone resolves floating times for this feed (overrides feed.time_zone).
	TimeZone string `yaml:"time_zone"`
	// Identity is how events are keyed: "uid" (default) or "content" for
	// feeds that mint new UIDs on every fetch.
	Identity string  `yaml:"identity"`
	Window   *Window `yaml:"window"`
	// Limits override the top-level limits for this feed, key by key.
	Limits *Limits `yaml:"limits"`
	// Presentation is what of the feed reaches Google and how it looks
	// there (filters, title, color, privacy, visibility, transparency,
	// reminders).
	Presentation `yaml:",inline"`
}

// BasicAuth are credentials for a feed behind HTTP basic authentication.
type BasicAuth struct {
	Username string `yaml:"username"`
	Password string `yaml:"password"`
}

// Default returns a configuration with every default filled in and no
// subscriptions.
func Default() *Config {
	return &Config{
		StateDir: "/var/lib/calsyncd",
		Listen:   "127.0.0.1:8765",
		Schedule: "@hourly",
		Log:      Log{Format: "text", Level: "info"},
		Store:    Store{Driver: "sqlite", LeaseTTL: Duration(60 * time.Second)},
		Writer:   writerOf(calsyncd.DefaultWriterLimits()),
		Feed: Feed{
			MaxSize:        20 << 20,
			Timeout:        Duration(60 * time.Second),
			ConnectTimeout: Duration(10 * time.Second),
		},
		Window: Window{Past: Duration(30 * 24 * time.Hour)},
		Limits: Limits{MaxEvents: 20_000, MaxInstancesExpanded: 5_000, FilterTime: Duration(10 * time.Second)},
		Sync: Sync{
			ErrorThreshold:    3,
			ErrorMaxInterval:  Duration(24 * time.Hour),
			ReconcileInterval: Duration(24 * time.Hour),
			ShutdownTimeout:   Duration(30 * time.Second),
			DeleteGuard:       DeleteGuard{MinDeletes: 10, MaxFraction: 0.5, ConfirmRuns: 3, Period: Duration(7 * 24 * time.Hour)},
			Retention:         Retention{MaxAge: Duration(90 * 24 * time.Hour), MaxRuns: 500},
		},
	}
}

// DatabaseDSN is the store's DSN with its default applied.
func (c *Config) DatabaseDSN() string {
	if c.Store.DSN != "" {
		return c.Store.DSN
	}
	return filepath.Join(c.StateDir, "calsyncd.db")
}

// AccountByName returns the named account; "" and "default" name the
// top-level google block.
func (c *Config) AccountByName(name string) (Account, bool) {
	if name == "" || name == DefaultAccount {
		a := c.Google
		a.Name = DefaultAccount
		return a, true
	}
	for _, a := range c.Accounts {
		if a.Name == name {
			a.Endpoint = c.Google.Endpoint
			return a, true
		}
	}
	return Account{}, false
}

// AccountNames lists every configured account, the default first.
func (c *Config) AccountNames() []string {
	names := []string{DefaultAccount}
	for _, a := range c.Accounts {
		names = append(names, a.Name)
	}
	return names
}

// SubscriptionAccount is the account a subscription writes as.
func (s Subscription) AccountName() string {
	if s.Account == "" {
		return DefaultAccount
	}
	return s.Account
}

// EffectiveWindow is the subscription's window, or the global one.
func (c *Config) EffectiveWindow(s Subscription) Window {
	if s.Window != nil {
		return *s.Window
	}
	return c.Window
}

// EffectiveLimits are the subscription's limits: its own where it sets
// them, the top-level ones elsewhere.
func (c *Config) EffectiveLimits(s Subscription) Limits {
	l := c.Limits
	if o := s.Limits; o != nil {
		if o.MaxEvents > 0 {
			l.MaxEvents = o.MaxEvents
		}
		if o.MaxInstancesExpanded > 0 {
			l.MaxInstancesExpanded = o.MaxInstancesExpanded
		}
		if o.FilterTime > 0 {
			l.FilterTime = o.FilterTime
		}
	}
	return l
}

// EffectiveTimeZone is the zone floating times fall back to for s.
func (c *Config) EffectiveTimeZone(s Subscription) string {
	if s.TimeZone != "" {
		return s.TimeZone
	}
	return c.Feed.TimeZone
}

// Subscription returns the subscription with the given id.
func (c *Config) Subscription(id string) (Subscription, bool) {
	i := -1
	if c.byID != nil {
		i = c.byID.lookup(c.Subscriptions, id)
	} else {
		i = scan(c.Subscriptions, id)
	}
	if i < 0 {
		return Subscription{}, false
	}
	return c.Subscriptions[i], true
}

// RedactURL renders a feed URL without anything that may be secret: only the
// scheme and the host survive (private feed URLs carry tokens in their path,
// query or userinfo).
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "<unparseable url>"
	}
	if u.Scheme == "file" {
		return "file://…"
	}
	host := u.Host
	if i := strings.LastIndex(host, "@"); i >= 0 {
		host = host[i+1:]
	}
	return u.Scheme + "://" + host + "/…"
}

func (s Subscription) String() string {
	return fmt.Sprintf("%s (%s → %s)", s.ID, RedactURL(s.URL), s.Calendar)
}
