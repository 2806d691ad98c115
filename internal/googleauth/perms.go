package googleauth

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/calsyncd/calsyncd/internal/config"
)

// Problem is a key or token file that someone other than its owner can
// read or change.
type Problem struct {
	Account string
	// What is "credentials" or "token".
	What string
	Path string
	Mode fs.FileMode
}

func (p Problem) String() string {
	return fmt.Sprintf("account %s: %s file %s is accessible to group or others (mode %04o); run chmod 600 %s",
		p.Account, p.What, p.Path, p.Mode.Perm(), p.Path)
}

// CheckPermissions lists every account's key and token files that are open
// to group or others. A file that does not exist is not a problem here:
// Load reports it, with what to do.
func CheckPermissions(cfg *config.Config) []Problem {
	if runtime.GOOS == "windows" {
		// Unix permission bits mean nothing there.
		return nil
	}
	var out []Problem
	check := func(account, what, path string) {
		if path == "" {
			return
		}
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			return
		}
		if fi.Mode().Perm()&0o077 != 0 {
			out = append(out, Problem{Account: account, What: what, Path: path, Mode: fi.Mode().Perm()})
		}
	}
	for _, name := range cfg.AccountNames() {
		acct, _ := cfg.AccountByName(name)
		check(name, "credentials", acct.CredentialsFile)
		if acct.CredentialsFile != "" {
			check(name, "token", TokenFile(cfg, acct))
		}
	}
	return out
}

// ConfigProblem is a configuration file open to people who should not
// change, or read, it. Whoever can change it can send the calendars
// elsewhere, add alert targets, and point the feeds (with the headers and
// passwords it names, ${VAR} or not) at a host of their own.
type ConfigProblem struct {
	Path string
	Mode fs.FileMode
	// Writable: others, or the group of a file that holds secrets, may
	// change it; --strict-perms refuses to run. When false, others can read
	// secrets written in it literally (not as ${VAR}): a warning.
	Writable bool
	// Keys name the keys holding secrets (never their values): every one
	// when Writable, the literal ones otherwise.
	Keys []string
}

func (p ConfigProblem) String() string {
	what := "is readable by others"
	switch {
	case p.Writable && p.Mode&0o002 != 0:
		what = "is writable by others"
	case p.Writable:
		what = "is writable by its group"
	}
	s := fmt.Sprintf("configuration file %s %s (mode %04o)", p.Path, what, p.Mode.Perm())
	switch {
	case p.Writable && len(p.Keys) > 0:
		return s + " and holds secrets (" + strings.Join(p.Keys, ", ") + "): whoever can change it can send them, the calendars and the alerts elsewhere; run " + p.Fix()
	case p.Writable:
		return s + ": whoever can change it can send the calendars and the alerts elsewhere; run " + p.Fix()
	}
	return s + " and holds secrets written in it (" + strings.Join(p.Keys, ", ") + "): run " + p.Fix() +
		", or move them to ${VAR} references set in the service's environment"
}

// Fix is the command that closes the file: 0600 for a file the service's
// user owns, 0640 for one root owns and the service's group reads.
func (p ConfigProblem) Fix() string {
	return fmt.Sprintf("chmod 600 %s (or chmod 640 %s, owned by root with the service's group)", p.Path, p.Path)
}

// CheckConfigFile says whether the configuration's files (the main file
// and every file include: names) are open to others: writable by others
// at all, writable by their group when they hold secrets, or readable by
// others when they hold secrets written literally. A group that may read
// one is the service's (root:calsyncd 0640) and is fine.
func CheckConfigFile(cfg *config.Config) []ConfigProblem {
	if runtime.GOOS == "windows" || cfg.Path == "" {
		return nil
	}
	files := cfg.Files
	if len(files) == 0 {
		files = []string{cfg.Path}
	}
	var out []ConfigProblem
	var raw *config.Config // read once, with no variable set, when needed
	for _, file := range files {
		fi, err := os.Stat(file)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		perm := fi.Mode().Perm()
		if perm&0o026 == 0 { // neither group- nor world-writable, nor world-readable
			continue
		}
		held := secretKeys(cfg, file)
		if perm&0o002 != 0 || perm&0o020 != 0 && len(held) > 0 {
			out = append(out, ConfigProblem{Path: file, Mode: perm, Writable: true, Keys: keysOf(held)})
		}
		if perm&0o004 != 0 && len(held) > 0 {
			if raw == nil {
				raw = readRaw(cfg)
			}
			if literal := literalSecretKeys(raw, file, held); len(literal) > 0 {
				out = append(out, ConfigProblem{Path: file, Mode: perm, Keys: literal})
			}
		}
	}
	return out
}

// secretKeys maps each key of file that holds a secret to its value: the
// status token, the database password, feed and alert headers, feed
// passwords, feed URLs with a password or a query, and alert URLs (a
// webhook's address is its secret). Keys are as file writes them: an
// included file's subscriptions are its own list.
func secretKeys(cfg *config.Config, file string) map[string]string {
	out := map[string]string{}
	set := func(key, value string) {
		if value != "" {
			out[key] = value
		}
	}
	urlSecret := func(raw string) bool {
		u, err := url.Parse(raw)
		if err != nil {
			return true // cannot tell: assume the worst
		}
		return hasPassword(u.User) || u.RawQuery != ""
	}
	if file == cfg.Path {
		set("status.token", cfg.Status.Token)
		if dsn := cfg.Store.DSN; cfg.Store.Driver == "postgres" {
			u, err := url.Parse(dsn)
			if strings.Contains(dsn, "password=") || err == nil && u.User != nil && hasPassword(u.User) {
				set("store.dsn", dsn)
			}
		}
		for i, a := range cfg.Alerts {
			at := fmt.Sprintf("alerts[%d]", i)
			set(at+".url", a.URL)
			for name, v := range a.Headers {
				set(at+".headers."+name, v)
			}
		}
	}
	for i, s := range cfg.Subscriptions {
		in, at := cfg.SubscriptionSource(i)
		if in != file {
			continue
		}
		if urlSecret(s.URL) {
			set(at+".url", s.URL)
		}
		for name, v := range s.Headers {
			set(at+".headers."+name, v)
		}
		if s.BasicAuth != nil {
			set(at+".basic_auth.password", s.BasicAuth.Password)
		}
	}
	return out
}

// readRaw reads the configuration again with no variable set, which
// leaves each ${VAR} as it is written; nil when it no longer reads back.
func readRaw(cfg *config.Config) *config.Config {
	data, err := os.ReadFile(cfg.Path)
	if err != nil {
		return nil
	}
	again, _, err := config.ParseAllowUnset(cfg.Path, data, nil)
	if err != nil {
		return nil
	}
	return again
}

// literalSecretKeys are the keys of held whose secret is written in file
// itself rather than taken from a ${VAR}; raw is the configuration read
// with no variable set (nil: every secret is taken as literal).
func literalSecretKeys(raw *config.Config, file string, held map[string]string) []string {
	written := held
	if raw != nil {
		written = secretKeys(raw, file)
	}
	var out []string
	for _, k := range keysOf(held) {
		if v, ok := written[k]; ok && !strings.Contains(v, "${") {
			out = append(out, k)
		}
	}
	return out
}

func keysOf(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func hasPassword(u *url.Userinfo) bool {
	_, ok := u.Password()
	return ok
}
