package config

import (
	"fmt"
	"net/url"
	"strings"
)

// Alert formats: what a webhook is sent.
const (
	// AlertJSON posts {"event","subscription","account","message","at"}.
	AlertJSON = "json"
	// AlertSlack posts {"text": …}, as Slack's incoming webhooks (and
	// Mattermost's, Rocket.Chat's) take it.
	AlertSlack = "slack"
	// AlertNtfy posts the message as the body with a Title header, as
	// ntfy publishes it.
	AlertNtfy = "ntfy"
)

// Alert is one webhook told when a subscription or an account needs a
// person. Its URL often carries a token (a Slack hook, an ntfy topic):
// logs and status show only its scheme and host.
type Alert struct {
	URL string `yaml:"url"`
	// Headers are sent with every alert (values may hold ${VAR} secrets),
	// e.g. Authorization for a protected ntfy topic.
	Headers map[string]string `yaml:"headers"`
	// Format is json (default), slack or ntfy.
	Format string `yaml:"format"`
}

// AlertFormat is the alert's format with its default applied.
func (a Alert) AlertFormat() string {
	if a.Format == "" {
		return AlertJSON
	}
	return a.Format
}

func (a Alert) String() string { return RedactURL(a.URL) + " (" + a.AlertFormat() + ")" }

// validateAlerts checks the alerts: block.
func (c *Config) validateAlerts(bad func(key, format string, args ...any)) {
	for i, a := range c.Alerts {
		p := fmt.Sprintf("alerts[%d]", i)
		if a.URL == "" {
			bad(p+".url", "required: the webhook to post alerts to")
		} else if u, err := url.Parse(a.URL); err != nil {
			// Never repeat the URL: it may carry a token.
			bad(p+".url", "not a valid URL")
		} else if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
			bad(p+".url", "must be an http or https URL, got scheme %q", u.Scheme)
		} else if u.Host == "" {
			bad(p+".url", "URL has no host")
		}
		switch a.Format {
		case "", AlertJSON, AlertSlack, AlertNtfy:
		default:
			bad(p+".format", "must be json, slack or ntfy, got %q", a.Format)
		}
		for name, value := range a.Headers {
			if !headerNamePattern.MatchString(name) {
				bad(p+".headers."+name, "not a valid HTTP header name")
			}
			if strings.ContainsAny(value, "\r\n") {
				// The value is not shown: it is likely a secret.
				bad(p+".headers."+name, "the value must not contain a line break (CR or LF)")
			}
		}
	}
}
