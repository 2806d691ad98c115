package config

import (
	"fmt"
	"net/url"
	"path"
	"strings"
)

// Warning is something in a valid configuration that is probably a
// mistake: calsyncd runs with it, and says so (validate prints it, the
// daemon logs it).
type Warning struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (w Warning) String() string {
	return (&Error{File: w.File, Line: w.Line, Key: w.Key, Msg: w.Msg}).Error()
}

// warnings finds what is valid but probably wrong.
func (c *Config) warnings(d *decoder) []Warning {
	var out []Warning
	type target struct{ feed, calendar string }
	first := map[target]int{}
	for i, s := range c.Subscriptions {
		t := target{feed: feedIdentity(s.URL), calendar: strings.ToLower(strings.TrimSpace(s.Calendar))}
		j, dup := first[t]
		if !dup {
			first[t] = i
			continue
		}
		p, q := fmt.Sprintf("subscriptions[%d]", i), fmt.Sprintf("subscriptions[%d]", j)
		out = append(out, Warning{File: d.file, Line: d.line(p), Key: p,
			Msg: fmt.Sprintf("%q mirrors the same feed (%s) into the same calendar as %q (%s): every event will appear twice; remove one, or point it at another calendar",
				s.ID, RedactURL(s.URL), c.Subscriptions[j].ID, c.elsewhere(d, q, c.fileOf(i)))})
	}
	out = append(out, c.stopWarning(d)...)
	out = append(out, c.credentialWarnings(d)...)
	out = append(out, c.windowPastWarnings(d)...)
	return append(out, c.presentationWarnings(d)...)
}

// feedIdentity is a feed URL reduced to what names the feed: webcal is
// https, scheme and host are case-insensitive, default ports, credentials
// and fragments do not count.
func feedIdentity(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return raw
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme == "webcal" || scheme == "webcals" {
		scheme = "https"
	}
	if scheme == "file" {
		return "file://" + path.Clean(u.Path)
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	q := ""
	if u.RawQuery != "" {
		q = "?" + u.RawQuery
	}
	return scheme + "://" + host + p + q
}

// credentialWarnings notes accounts that subscriptions write as with
// neither credentials nor an emulator endpoint: every write would fail,
// and `run` refuses to start (NoCredentials).
func (c *Config) credentialWarnings(d *decoder) []Warning {
	var out []Warning
	for _, name := range c.NoCredentials() {
		key := "google.credentials_file"
		for i, a := range c.Accounts {
			if a.Name == name {
				key = fmt.Sprintf("accounts[%d]", i)
			}
		}
		out = append(out, Warning{File: d.file, Line: d.line(key), Key: key,
			Msg: fmt.Sprintf("account %q has no credentials_file and no google.endpoint: calsyncd cannot write to Google as it, and run refuses to start; %s", name, CredentialsStep)})
	}
	return out
}

// CredentialsStep is what to do about an account without credentials.
const CredentialsStep = "set credentials_file to a service-account key or an OAuth client JSON (README \"Authorising calsyncd\"), or try the subscriptions on the built-in emulator first: calsyncd demo --config FILE"

// NoCredentials lists the accounts some subscription writes as that have
// neither a credentials_file nor an endpoint (an emulator).
func (c *Config) NoCredentials() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range c.Subscriptions {
		name := s.AccountName()
		if seen[name] {
			continue
		}
		seen[name] = true
		if a, ok := c.AccountByName(name); ok && a.CredentialsFile == "" && a.Endpoint == "" {
			out = append(out, name)
		}
	}
	return out
}
