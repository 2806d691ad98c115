package config

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ownerPattern is what an owner name may be: it is written into every
// event's marks and hashed into its id.
var ownerPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// headerNamePattern is RFC 9110's token.
var headerNamePattern = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// CronParser parses `schedule`: five standard fields or a descriptor such
// as @hourly or @every 30m.
var CronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// complaint records what is wrong with a key.
type complaint func(key, format string, args ...any)

func (c *Config) validate(d *decoder) Errors {
	var errs Errors
	bad := func(key, format string, args ...any) {
		errs = append(errs, &Error{File: d.file, Line: d.line(key), Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	c.validateDaemon(bad)
	accounts := c.validateAccounts(bad)
	c.validateFeedAndSync(bad)
	c.validateSubscriptions(bad, accounts, d)
	c.validatePresentation(bad)
	c.validateAlerts(bad)
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	return errs
}

// validateDaemon checks the process's own settings: state, schedule,
// listen address, logs and store.
func (c *Config) validateDaemon(bad complaint) {
	if c.StateDir == "" {
		bad("state_dir", "must not be empty")
	}
	if c.Owner != "" && !ownerPattern.MatchString(c.Owner) {
		bad("owner", "must be lowercase letters, digits, ., - or _ (at most 63), e.g. %s", HostOwner())
	}
	if msg := checkSchedule(c.Schedule); msg != "" {
		bad("schedule", "%s", msg)
	}
	if host, port, err := net.SplitHostPort(c.Listen); err != nil || port == "" {
		bad("listen", "expected host:port, e.g. 127.0.0.1:8765")
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		bad("listen", "the port must be 1 to 65535, got %q", port)
	} else if !IsLoopbackHost(host) && c.Status.Token == "" {
		bad("listen", "listening beyond loopback (%s) requires status.token", host)
	}
	for i, h := range c.Status.AllowedHosts {
		if _, _, err := net.SplitHostPort(h); err == nil || h == "" || strings.ContainsAny(h, "/ *@") || strings.ContainsFunc(h, isControl) {
			bad(fmt.Sprintf("status.allowed_hosts[%d]", i), "must be a host name or address without scheme, port or wildcard, e.g. status.example.com")
		}
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		bad("log.format", "must be text or json, got %q", c.Log.Format)
	}
	switch strings.ToLower(c.Log.Level) {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "must be debug, info, warn or error, got %q", c.Log.Level)
	}
	switch c.Store.Driver {
	case "sqlite":
	case "postgres":
		if c.Store.DSN == "" {
			bad("store.dsn", "required with driver postgres")
		}
	default:
		bad("store.driver", "must be sqlite or postgres, got %q", c.Store.Driver)
	}
}

// validateAccounts checks the Google accounts and returns their names.
func (c *Config) validateAccounts(bad complaint) map[string]bool {
	if c.Google.Name != "" {
		bad("google.name", "the google block is the default account; name accounts under accounts:")
	}
	if c.Google.Endpoint != "" {
		if u, err := url.Parse(c.Google.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("google.endpoint", "must be an http(s) URL such as http://127.0.0.1:8080/calendar/v3/")
		}
	}
	if c.Google.Impersonate != "" && !strings.Contains(c.Google.Impersonate, "@") {
		bad("google.impersonate", "must be an email address")
	}
	accounts := map[string]bool{DefaultAccount: true}
	for i, a := range c.Accounts {
		p := fmt.Sprintf("accounts[%d]", i)
		switch {
		case a.Name == "":
			bad(p+".name", "required")
		case a.Name == DefaultAccount:
			bad(p+".name", "%q is the top-level google block; choose another name", DefaultAccount)
		case !idPattern.MatchString(a.Name):
			bad(p+".name", "must be lowercase letters, digits, - or _ (at most 63)")
		case accounts[a.Name]:
			bad(p+".name", "duplicate account %q", a.Name)
		}
		accounts[a.Name] = true
		if a.Endpoint != "" {
			bad(p+".endpoint", "set the endpoint once, in google.endpoint; it applies to every account")
		}
		if a.Impersonate != "" && !strings.Contains(a.Impersonate, "@") {
			bad(p+".impersonate", "must be an email address")
		}
	}
	return accounts
}

// validateFeedAndSync checks every numeric key's range (ranges.go) and
// the feed's zone.
func (c *Config) validateFeedAndSync(bad complaint) {
	c.checkRanges(bad)
	if c.Feed.TimeZone != "" {
		if _, err := time.LoadLocation(c.Feed.TimeZone); err != nil {
			bad("feed.time_zone", "unknown time zone %q (use an IANA name such as Europe/Berlin)", c.Feed.TimeZone)
		}
	}
}

// validateSubscriptions checks each subscription; accounts are the known
// account names.
func (c *Config) validateSubscriptions(bad complaint, accounts map[string]bool, d *decoder) {
	ids := map[string]int{}
	zones := map[string]bool{} // each zone's name, looked up once: valid or not
	for i, s := range c.Subscriptions {
		p := fmt.Sprintf("subscriptions[%d]", i)
		switch {
		case s.ID == "":
			bad(p+".id", "required")
		case !idPattern.MatchString(s.ID):
			bad(p+".id", "must be lowercase letters, digits, - or _ (at most 63), got %q", s.ID)
		default:
			if j, dup := ids[s.ID]; dup {
				bad(p+".id", "duplicate id %q (also %s)", s.ID, c.elsewhere(d, fmt.Sprintf("subscriptions[%d].id", j), c.fileOf(i)))
			}
			ids[s.ID] = i
		}
		if s.URL == "" {
			bad(p+".url", "required")
		} else if msg := checkFeedURL(s.URL, filepath.Dir(c.fileOf(i))); msg != "" {
			bad(p+".url", "%s", msg)
		}
		if strings.TrimSpace(s.Calendar) == "" {
			bad(p+".calendar", "required: the Google calendar id to write to (e.g. abc123@group.calendar.google.com)")
		}
		if s.Account != "" && !accounts[s.Account] {
			bad(p+".account", "unknown account %q (known: %s)", s.Account, strings.Join(sortedKeys(accounts), ", "))
		}
		switch s.Identity {
		case "", "uid", "content":
		default:
			bad(p+".identity", "must be uid or content, got %q", s.Identity)
		}
		if s.TimeZone != "" {
			valid, known := zones[s.TimeZone]
			if !known {
				_, err := time.LoadLocation(s.TimeZone)
				valid = err == nil
				zones[s.TimeZone] = valid
			}
			if !valid {
				bad(p+".time_zone", "unknown time zone %q (use an IANA name such as Europe/Berlin)", s.TimeZone)
			}
		}
		for name, value := range s.Headers {
			if !headerNamePattern.MatchString(name) {
				bad(p+".headers."+name, "not a valid HTTP header name")
			}
			if strings.ContainsFunc(value, isControl) {
				bad(p+".headers."+name, "the value contains a line break or control character (the value is not shown)")
			}
		}
		if s.BasicAuth != nil && s.BasicAuth.Username == "" {
			bad(p+".basic_auth.username", "required with basic_auth")
		}
	}
}

// Bounds of an @every schedule. Below a second robfig/cron runs every
// second whatever was written, even "@every -1h".
const (
	minEvery = time.Second
	maxEvery = 365 * 24 * time.Hour
)

// checkSchedule says what is wrong with a schedule, or "".
func checkSchedule(spec string) string {
	s, err := CronParser.Parse(spec)
	if err != nil {
		return fmt.Sprintf("invalid cron spec %q: %v", spec, err)
	}
	// robfig/cron looks about five years ahead and answers the zero time
	// when nothing matches ("0 0 31 2 *"): such a schedule would never run
	// a sync, and a scheduler fed the zero time runs back to back.
	if s.Next(time.Now()).IsZero() {
		return fmt.Sprintf("%q never fires: no time in the next five years matches it (is the day in the month?)", spec)
	}
	if _, every, ok := strings.Cut(spec, "@every "); ok {
		d, err := time.ParseDuration(strings.TrimSpace(every))
		if err != nil || d < minEvery || d > maxEvery {
			return fmt.Sprintf("the interval of %q must be at least %s and at most %s", spec, fmtDuration(minEvery), fmtDuration(maxEvery))
		}
	}
	return ""
}

// isControl reports the characters an HTTP field value must not hold
// (RFC 9110 allows tab, not the other controls).
func isControl(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }

// checkFeedURL says what is wrong with a feed URL without repeating it (it may
// carry a secret token; a file URL's path is no secret and is named). dir is
// the directory of the file naming the URL, which a relative file path was
// meant from.
func checkFeedURL(raw, dir string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "not a valid URL"
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "webcal", "webcals":
		if u.Host == "" {
			return "URL has no host"
		}
	case "file":
		return checkFileURL(u, dir)
	case "":
		return "URL has no scheme (use https://, webcal:// or file://)"
	default:
		return fmt.Sprintf("unsupported URL scheme %q (use https, http, webcal or file)", u.Scheme)
	}
	return ""
}

// checkFileURL refuses a file URL that does not name an absolute path on
// this machine: file://./feeds/x.ics and file://feeds/x.ics read "." and
// "feeds" as a host, and the path left is not the file meant. The message
// gives the URL meant, from the configuration's directory.
func checkFileURL(u *url.URL, dir string) string {
	rel := ""
	switch {
	case u.Opaque != "": // file:feeds/x.ics
		rel = u.Opaque
	case u.Host != "" && !strings.EqualFold(u.Hostname(), "localhost"):
		rel = u.Host + u.Path
	case u.Path == "":
		return "file URL has no path (use file:///absolute/path.ics)"
	default:
		return ""
	}
	abs, err := filepath.Abs(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		abs = "/absolute/path/" + rel
	}
	return fmt.Sprintf("%q does not name an absolute path: a file URL is file:// and then the absolute path (three slashes in all); did you mean %s?",
		u.String(), (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String())
}

// IsLoopbackHost reports whether a listen host only accepts local
// connections.
func IsLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
