package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/config"
)

func TestAlertsParse(t *testing.T) {
	cfg, err := parse(t, `alerts:
  - url: https://ntfy.example.com/calsyncd-${NTFY_TOPIC}
    format: ntfy
    headers:
      Authorization: Bearer ${NTFY_TOKEN}
  - url: https://hooks.slack.com/services/T0/B0/${SLACK_KEY}
    format: slack
  - url: http://127.0.0.1:9000/hook
`, map[string]string{"NTFY_TOPIC": "t0p1c", "NTFY_TOKEN": "tk_secret", "SLACK_KEY": "xyz"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Alerts) != 3 {
		t.Fatalf("alerts = %+v", cfg.Alerts)
	}
	a := cfg.Alerts[0]
	if a.URL != "https://ntfy.example.com/calsyncd-t0p1c" || a.Headers["Authorization"] != "Bearer tk_secret" || a.AlertFormat() != config.AlertNtfy {
		t.Errorf("first alert: %+v", a)
	}
	if got := cfg.Alerts[2].AlertFormat(); got != config.AlertJSON {
		t.Errorf("default format %q, want json", got)
	}
	if s := a.String(); strings.Contains(s, "t0p1c") || strings.Contains(s, "tk_secret") || s != "https://ntfy.example.com/… (ntfy)" {
		t.Errorf("an alert shows as %q: scheme and host only", s)
	}
}

func TestAlertsErrorsNameFileLineAndKey(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		env      map[string]string
		wantLine int
		wantKey  string
		wantMsg  string
		secret   string // must not appear in the error
	}{
		{name: "no url", yaml: "alerts:\n  - format: json\n", wantLine: 2, wantKey: "alerts[0].url", wantMsg: "required"},
		{name: "not http", yaml: "alerts:\n  - url: ftp://example.com/s3cret-path\n",
			wantLine: 2, wantKey: "alerts[0].url", wantMsg: `must be an http or https URL, got scheme "ftp"`, secret: "s3cret-path"},
		{name: "no scheme", yaml: "alerts:\n  - url: hooks.example.com/s3cret-path\n",
			wantLine: 2, wantKey: "alerts[0].url", wantMsg: "must be an http or https URL", secret: "s3cret-path"},
		{name: "no host", yaml: "alerts:\n  - url: https:///s3cret-path\n", wantLine: 2, wantKey: "alerts[0].url", wantMsg: "no host", secret: "s3cret-path"},
		{name: "unparseable", yaml: "alerts:\n  - url: \"https://exa mple.com/%zz-s3cret\"\n", wantLine: 2, wantKey: "alerts[0].url",
			wantMsg: "not a valid URL", secret: "s3cret"},
		{name: "unknown format", yaml: "alerts:\n  - url: https://example.com/x\n  - url: https://example.com/y\n    format: teams\n",
			wantLine: 4, wantKey: "alerts[1].format", wantMsg: `must be json, slack or ntfy, got "teams"`},
		{name: "bad header name", yaml: "alerts:\n  - url: https://example.com/x\n    headers:\n      \"Bad Name\": x\n",
			wantLine: 4, wantKey: "alerts[0].headers.Bad Name", wantMsg: "not a valid HTTP header name"},
		{name: "line break in a header value", yaml: "alerts:\n  - url: https://example.com/x\n    headers:\n      Authorization: ${TOKEN}\n",
			env: map[string]string{"TOKEN": "Bearer s3cret\r\nX-Evil: 1"}, wantLine: 4, wantKey: "alerts[0].headers.Authorization",
			wantMsg: "must not contain a line break", secret: "s3cret"},
		{name: "unset secret", yaml: "alerts:\n  - url: https://example.com/${HOOK}\n",
			wantLine: 2, wantKey: "alerts[0].url", wantMsg: "environment variable HOOK is not set"},
		{name: "not a list", yaml: "alerts:\n  url: https://example.com/x\n", wantLine: 2, wantKey: "alerts", wantMsg: "expected a list"},
		{name: "metadata address", yaml: "alerts:\n  - url: http://169.254.169.254/latest/s3cret\n",
			wantLine: 2, wantKey: "alerts[0].url", wantMsg: "169.254.169.254 is a link-local or cloud metadata address", secret: "s3cret"},
		{name: "link-local address", yaml: "alerts:\n  - url: http://169.254.10.20:8080/hook\n",
			wantLine: 2, wantKey: "alerts[0].url", wantMsg: "unless allow_link_local: true"},
		{name: "ipv6 link-local address", yaml: "alerts:\n  - url: \"http://[fe80::1%25eth0]/hook\"\n",
			wantLine: 2, wantKey: "alerts[0].url", wantMsg: "link-local or cloud metadata address"},
		{name: "ipv4-mapped metadata address", yaml: "alerts:\n  - url: \"http://[::ffff:169.254.169.254]/hook\"\n",
			wantLine: 2, wantKey: "alerts[0].url", wantMsg: "link-local or cloud metadata address"},
		{name: "aws ipv6 metadata address", yaml: "alerts:\n  - url: \"http://[fd00:ec2::254]/hook\"\n",
			wantLine: 2, wantKey: "alerts[0].url", wantMsg: "link-local or cloud metadata address"},
		{name: "metadata name", yaml: "alerts:\n  - url: http://Metadata.Google.Internal./computeMetadata/v1/\n",
			wantLine: 2, wantKey: "alerts[0].url", wantMsg: "link-local or cloud metadata address"},
		{name: "unknown key", yaml: "alerts:\n  - url: https://example.com/x\n    fromat: slack\n",
			wantLine: 3, wantKey: "alerts[0].fromat", wantMsg: `unknown key (did you mean "format"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.yaml, tt.env)
			var errs config.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v, want config.Errors", err)
			}
			if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("the error repeats a secret: %v", err)
			}
			for _, e := range errs {
				if e.Line == tt.wantLine && e.Key == tt.wantKey && strings.Contains(e.Msg, tt.wantMsg) {
					return
				}
			}
			t.Fatalf("no error at line %d key %q containing %q; got:\n%v", tt.wantLine, tt.wantKey, tt.wantMsg, err)
		})
	}
}

// A webhook on a link-local address is refused unless it says
// allow_link_local; other private addresses pass.
func TestAlertsLinkLocalNeedsOptIn(t *testing.T) {
	for _, tt := range []struct {
		yaml string
		ok   bool
	}{
		{"alerts:\n  - url: http://169.254.169.254/hook\n    allow_link_local: true\n", true},
		{"alerts:\n  - url: http://[fe80::1]/hook\n    allow_link_local: true\n", true},
		{"alerts:\n  - url: http://metadata.google.internal/hook\n    allow_link_local: true\n", true},
		{"alerts:\n  - url: http://169.254.169.254/hook\n    allow_link_local: false\n", false},
		{"alerts:\n  - url: http://10.0.0.5/hook\n", true},
		{"alerts:\n  - url: http://127.0.0.1:9000/hook\n", true},
		{"alerts:\n  - url: http://169.253.255.255/hook\n", true},
		{"alerts:\n  - url: http://metadata.google.internal.example.com/hook\n", true},
	} {
		cfg, err := parse(t, tt.yaml, nil)
		if (err == nil) != tt.ok {
			t.Errorf("%q: err = %v, want ok=%v", tt.yaml, err, tt.ok)
		}
		if err == nil && strings.Contains(tt.yaml, "allow_link_local: true") && !cfg.Alerts[0].AllowLinkLocal {
			t.Errorf("%q: allow_link_local not read", tt.yaml)
		}
	}
}
