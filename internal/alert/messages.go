package alert

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
)

// maxDetail bounds the run's error quoted in a message.
const maxDetail = 400

// describe writes the alert for an event: a title and a message that says
// what happened and what to do. since is when the condition started.
func describe(cfg *config.Config, ev Event, s calsyncd.Settled, reminder bool, since time.Time) Message {
	m := Message{Event: ev, Subscription: s.Subscription, Account: s.Account, Reminder: reminder}
	id := s.Subscription
	still := ""
	if reminder {
		still = "still "
	}
	switch ev {
	case ErrorEntered:
		m.Title, m.Message = errorEnteredText(cfg, s, still)
	case ErrorCleared:
		m.Title = fmt.Sprintf("calsyncd: %s is ACTIVE again", id)
		m.Message = fmt.Sprintf("Subscription %s is ACTIVE again: its last run ended %s.", id, s.Run.Outcome)
	case DeletesHeld:
		m.Title, m.Message = deletesHeldText(cfg, s, still)
	case DeletesReleased:
		m.Title, m.Message = deletesReleasedText(cfg, s, still)
	case AuthFailed:
		m.Subscription = ""
		m.Title, m.Message = authFailedText(cfg, s, still)
	case UsageLimited:
		m.Subscription = ""
		m.Title, m.Message = usageLimitedText(cfg, s, still)
	case StraysLeft:
		m.Title, m.Message = straysLeftText(cfg, s, still)
	case FeedThrottled:
		m.Title, m.Message = feedThrottledText(cfg, s, still)
	}
	if reminder {
		m.Message += fmt.Sprintf(" (A reminder: this started at %s.)", since.UTC().Format(time.RFC3339))
	}
	sc := newScrubber(cfg)
	m.Title, m.Message = asciiTitle(sc.scrub(m.Title)), sc.scrub(m.Message)
	return m
}

// errorEnteredText: the subscription turned (or stays) ERROR.
func errorEnteredText(cfg *config.Config, s calsyncd.Settled, still string) (title, message string) {
	id := s.Subscription
	title = fmt.Sprintf("calsyncd: %s is %sin ERROR", id, still)
	message = fmt.Sprintf("Subscription %s is %sin ERROR after %d failed runs in a row; its calendar is not being updated. "+
		"Last error (%s): %s. calsyncd keeps retrying, less often (at most every sync.error_max_interval); "+
		"`calsyncd status` explains the error. Fix it, then `calsyncd sync %s` runs it at once.",
		id, still, s.ConsecutiveErrors, s.Run.ErrorClass, detail(s.Run.Error), id)
	return title, message
}

// deletesHeldText: the mass-delete guard holds deletes, and why.
func deletesHeldText(cfg *config.Config, s calsyncd.Settled, still string) (title, message string) {
	id := s.Subscription
	title = fmt.Sprintf("calsyncd: %s: %d deletes %sheld", id, s.HeldDeletes, still)
	message = fmt.Sprintf("The mass-delete guard %sholds %d deletes of subscription %s: its feed lost more than half of its events "+
		"(or all of them), which looks like a broken feed rather than a change. Creates and updates still go. "+
		"If the events really are gone, run `calsyncd sync --allow-deletes %s`; otherwise fix the feed. "+
		"The guard lets them go after %d runs in a row.", still, s.HeldDeletes, id, id, cfg.Sync.DeleteGuard.ConfirmRuns)
	switch {
	case s.HeldWhy != "":
		message = fmt.Sprintf("The mass-delete guard %sholds %d deletes of subscription %s; creates and updates still go. Of them, %s. "+
			"`calsyncd sync --dry-run %s` lists them.", still, s.HeldDeletes, id, s.HeldWhy, id)
	case s.HeldByFilters > 0:
		message = fmt.Sprintf("The mass-delete guard %sholds %d deletes of subscription %s; %d of them are events its filters now exclude: "+
			"a filter change, not a broken feed. `calsyncd sync --dry-run %s` lists them; if the filters are meant, run "+
			"`calsyncd sync --allow-deletes %s`; waiting does not release them.",
			still, s.HeldDeletes, id, s.HeldByFilters, id, id)
	}
	return title, message
}

// deletesReleasedText: no deletes are held any more, and how they went.
func deletesReleasedText(cfg *config.Config, s calsyncd.Settled, still string) (title, message string) {
	id := s.Subscription
	title = fmt.Sprintf("calsyncd: %s: no deletes held", id)
	switch {
	case s.Released > 0 && s.ReleasedByOperator:
		message = fmt.Sprintf("The %d held deletes of subscription %s were made: allowed by `calsyncd sync --allow-deletes`.", s.Released, id)
	case s.Released > 0:
		message = fmt.Sprintf("The %d held deletes of subscription %s were made: the feed kept its smaller set of events for %d runs in a row.",
			s.Released, id, cfg.Sync.DeleteGuard.ConfirmRuns)
	default:
		message = fmt.Sprintf("No deletes of subscription %s are held any more: its feed has its events back, and nothing was deleted.", id)
	}
	return title, message
}

// authFailedText: Google refuses the account's credentials.
func authFailedText(cfg *config.Config, s calsyncd.Settled, still string) (title, message string) {
	id, acct := s.Subscription, s.Account
	title = fmt.Sprintf("calsyncd: account %s: Google %srefuses its credentials", acct, still)
	message = fmt.Sprintf("Google %srefuses the credentials of account %s (seen syncing %s): %s. "+
		"Its subscriptions cannot write until this is fixed. `calsyncd auth status` says who the account is and what is wrong; "+
		"for a person's account, `calsyncd auth login --account %s`; for a service account, check its key, "+
		"its domain-wide delegation and the calendars' sharing.", still, acct, id, detail(s.Run.Error), acct)
	return title, message
}

// usageLimitedText: Google's usage limits lock the account out.
func usageLimitedText(cfg *config.Config, s calsyncd.Settled, still string) (title, message string) {
	acct := s.Account
	title = fmt.Sprintf("calsyncd: account %s %slocked out by Google's usage limits", acct, still)
	message = fmt.Sprintf("Google's usage limits (\"Calendar usage limits exceeded\", or the project's daily quota) %slock account %s out until %s; "+
		"its writes are deferred and resume by themselves. If this happens often, spread large calendars over several accounts.",
		still, acct, s.UsageLimitedUntil.UTC().Format(time.RFC3339))
	return title, message
}

// straysLeftText: a reconcile left events of unknown origin in the calendar.
func straysLeftText(cfg *config.Config, s calsyncd.Settled, still string) (title, message string) {
	id := s.Subscription
	title = fmt.Sprintf("calsyncd: %s: %d events of unknown origin %sleft in the calendar", id, s.HeldAdopted, still)
	message = fmt.Sprintf("A reconcile of subscription %s found %d events in Google carrying its marks that this database does not know "+
		"it wrote and that its feed no longer has (a lost database, a run that died before recording what it wrote, or another "+
		"installation of the same owner name writing the calendar). They are left alone. If they are this subscription's, "+
		"`calsyncd sync --reconcile --allow-deletes %s` deletes them; `calsyncd sync --dry-run --reconcile %s` lists them.",
		id, s.HeldAdopted, id, id)
	return title, message
}

// feedThrottledText: the feed server answers every fetch with 429.
func feedThrottledText(cfg *config.Config, s calsyncd.Settled, still string) (title, message string) {
	id := s.Subscription
	title = fmt.Sprintf("calsyncd: %s: the feed server %srefuses to serve the feed (429)", id, still)
	message = fmt.Sprintf("The feed server of subscription %s has answered every fetch with 429 (too many requests) since %s; "+
		"its calendar has not been updated since. A rate limit is no failure: the subscription stays ACTIVE and calsyncd "+
		"comes back when the server says. If it lasts, ask the feed's provider whether they limit this host, or sync less often (schedule).",
		id, s.FeedThrottledSince.UTC().Format(time.RFC3339))
	return title, message
}

// detail is a run's error as a message quotes it: one line, bounded.
func detail(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "no detail"
	}
	if len(s) > maxDetail {
		cut := maxDetail
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strings.TrimSuffix(s, ".")
}

// asciiTitle keeps a title to printable ASCII: ntfy takes its title in a
// header, where not every client gets UTF-8 across.
func asciiTitle(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}

// scrubber removes from alerts whatever the configuration holds that is
// secret, should a message ever quote it: feed URLs beyond their host,
// header values, passwords, the webhooks' own URLs, the status token and
// the database DSN. The messages are built to hold none of them; this is
// the second line.
type scrubber struct{ secrets []string }

// minSecret is the shortest text scrubbed: shorter values ("1", "yes")
// would mangle the message and are no secrets worth the name.
const minSecret = 6

func newScrubber(cfg *config.Config) scrubber {
	var sc scrubber
	add := func(vs ...string) {
		for _, v := range vs {
			if len(v) >= minSecret {
				sc.secrets = append(sc.secrets, v)
			}
		}
	}
	addURL := func(raw string) {
		add(raw)
		if u, err := url.Parse(raw); err == nil {
			add(strings.TrimPrefix(u.RequestURI(), "/"), u.RawQuery, u.Path)
			if p, ok := u.User.Password(); ok {
				add(p)
			}
			add(u.User.Username())
		}
	}
	for _, s := range cfg.Subscriptions {
		addURL(s.URL)
		for _, v := range s.Headers {
			add(v)
		}
		if s.BasicAuth != nil {
			add(s.BasicAuth.Password)
		}
	}
	for _, a := range cfg.Alerts {
		addURL(a.URL)
		for _, v := range a.Headers {
			add(v)
		}
	}
	add(cfg.Status.Token)
	if cfg.Store.Driver == "postgres" {
		add(cfg.Store.DSN)
	}
	// Longest first, so a URL goes before its own path.
	slices.SortFunc(sc.secrets, func(a, b string) int { return len(b) - len(a) })
	return sc
}

func (sc scrubber) scrub(s string) string {
	for _, v := range sc.secrets {
		s = strings.ReplaceAll(s, v, "…")
	}
	return s
}
