package config

import (
	"fmt"
	"net/netip"
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
	// AllowLinkLocal lets alerts go to a link-local or cloud metadata
	// address (169.254.0.0/16, fe80::/10, fd00:ec2::254,
	// metadata.google.internal), which are refused otherwise.
	AllowLinkLocal bool `yaml:"allow_link_local"`
}

// metadataAddrs are cloud metadata services outside the link-local ranges.
var metadataAddrs = []netip.Addr{netip.MustParseAddr("fd00:ec2::254")}

// LinkLocalOrMetadata reports whether ip is link-local (169.254.0.0/16,
// fe80::/10, IPv4-mapped or not) or a cloud metadata service: an alert's
// body and headers must not reach the machine's own metadata service
// unless a webhook says so (allow_link_local).
func LinkLocalOrMetadata(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	if ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() {
		return true
	}
	for _, m := range metadataAddrs {
		if ip == m {
			return true
		}
	}
	return false
}

// MetadataHost reports whether a host name is a cloud metadata service's
// (metadata.google.internal, and plain metadata, which Google Cloud
// resolves to it), in any case, with or without a final dot.
func MetadataHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return h == "metadata.google.internal" || h == "metadata"
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
		} else if !a.AllowLinkLocal && forbiddenWebhookHost(u.Hostname()) {
			// The host is not secret (logs show it), the rest may be.
			bad(p+".url", "%s is a link-local or cloud metadata address; alerts are not posted there unless allow_link_local: true", u.Hostname())
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

// forbiddenWebhookHost: a literal link-local or metadata address, or a
// metadata service's name. Names that resolve to such addresses are
// refused when the alert is sent.
func forbiddenWebhookHost(host string) bool {
	if MetadataHost(host) {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && LinkLocalOrMetadata(ip)
}
