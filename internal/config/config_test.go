package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
)

func parse(t *testing.T, yaml string, env map[string]string) (*config.Config, error) {
	t.Helper()
	return config.Parse("/etc/calsyncd/config.yaml", []byte(yaml), func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	})
}

func TestParseAppliesDefaultsAndExpandsSecrets(t *testing.T) {
	cfg, err := parse(t, `
state_dir: /var/lib/calsyncd
subscriptions:
  - id: team
    url: https://calendar.example.com/private-${FEED_TOKEN}/basic.ics
    calendar: team@group.calendar.google.com
    headers:
      Authorization: Bearer ${API_TOKEN}
`, map[string]string{"FEED_TOKEN": "abc123", "API_TOKEN": "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Subscriptions[0]
	if s.URL != "https://calendar.example.com/private-abc123/basic.ics" || s.Headers["Authorization"] != "Bearer s3cret" {
		t.Errorf("expansion: url %q headers %v", s.URL, s.Headers)
	}
	if cfg.Schedule != "@hourly" || cfg.Writer.Concurrency != 2 || cfg.Writer.Spacing.D() != 250*time.Millisecond ||
		cfg.Writer.MaxAttempts != 5 || cfg.Writer.MaxRetryWait.D() != 15*time.Second || cfg.Listen != "127.0.0.1:8765" {
		t.Errorf("defaults not applied: %+v", cfg)
	}
	if s.AccountName() != config.DefaultAccount {
		t.Errorf("account = %q", s.AccountName())
	}
}

func TestParseErrorsNameFileLineAndKey(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		wantLine int
		wantKey  string
		wantMsg  string
	}{
		{
			name:     "unknown key",
			yaml:     "state_dir: /tmp/x\nshedule: '@hourly'\n",
			wantLine: 2, wantKey: "shedule", wantMsg: `unknown key (did you mean "schedule"?)`,
		},
		{
			name:     "unknown nested key",
			yaml:     "writer:\n  concurrency: 2\n  spacingg: 1s\n",
			wantLine: 3, wantKey: "writer.spacingg", wantMsg: "unknown key",
		},
		{
			name: "duplicate subscription id",
			yaml: `subscriptions:
  - id: team
    url: https://example.com/a.ics
    calendar: a@example.com
  - id: team
    url: https://example.com/b.ics
    calendar: b@example.com
`,
			wantLine: 5, wantKey: "subscriptions[1].id", wantMsg: `duplicate id "team"`,
		},
		{
			name: "bad url scheme",
			yaml: `subscriptions:
  - id: team
    url: ftp://example.com/secret-token/a.ics
    calendar: a@example.com
`,
			wantLine: 3, wantKey: "subscriptions[0].url", wantMsg: `unsupported URL scheme "ftp"`,
		},
		{
			name:     "bad duration",
			yaml:     "writer:\n  spacing: quarter-second\n",
			wantLine: 2, wantKey: "writer.spacing", wantMsg: `invalid duration "quarter-second"`,
		},
		{
			name:     "bad cron spec",
			yaml:     "state_dir: /tmp/x\nschedule: '61 * * * *'\n",
			wantLine: 2, wantKey: "schedule", wantMsg: "invalid cron spec",
		},
		{
			name: "missing calendar",
			yaml: `subscriptions:
  - id: team
    url: https://example.com/a.ics
`,
			wantLine: 2, wantKey: "subscriptions[0].calendar", wantMsg: "required",
		},
		{
			name:     "unset environment variable",
			yaml:     "status:\n  token: ${STATUS_TOKEN}\n",
			wantLine: 2, wantKey: "status.token", wantMsg: "environment variable STATUS_TOKEN is not set",
		},
		{
			name:     "not a number",
			yaml:     "writer:\n  concurrency: two\n",
			wantLine: 2, wantKey: "writer.concurrency", wantMsg: `expected a whole number, got "two"`,
		},
		{
			name:     "retry cap below its base",
			yaml:     "writer:\n  retry_base: 2s\n  retry_cap: 1s\n",
			wantLine: 3, wantKey: "writer.retry_cap", wantMsg: "must not be below writer.retry_base (2s)",
		},
		{
			name:     "duplicate key",
			yaml:     "listen: 127.0.0.1:1\nlisten: 127.0.0.1:2\n",
			wantLine: 2, wantKey: "listen", wantMsg: "duplicate key",
		},
		{
			name:     "public listen without token",
			yaml:     "listen: 0.0.0.0:8765\n",
			wantLine: 1, wantKey: "listen", wantMsg: "requires status.token",
		},
		{
			name: "unknown account",
			yaml: `subscriptions:
  - id: team
    url: https://example.com/a.ics
    calendar: a@example.com
    account: work
`,
			wantLine: 5, wantKey: "subscriptions[0].account", wantMsg: `unknown account "work"`,
		},
		{
			name:     "invalid yaml",
			yaml:     "state_dir: /tmp\nlisten: x\n  schedule: y\n",
			wantLine: 3, wantKey: "", wantMsg: "not valid YAML",
		},
		{
			name:     "allowed host with a port",
			yaml:     "status:\n  allowed_hosts:\n    - status.example.com\n    - status.example.com:8765\n",
			wantLine: 4, wantKey: "status.allowed_hosts[1]", wantMsg: "without scheme, port or wildcard",
		},
		{
			name:     "allowed host with a wildcard",
			yaml:     "status:\n  allowed_hosts: [\"*.example.com\"]\n",
			wantLine: 2, wantKey: "status.allowed_hosts[0]", wantMsg: "without scheme, port or wildcard",
		},
		{
			name:     "bad time zone",
			yaml:     "feed:\n  time_zone: W. Europe Standard Time\n",
			wantLine: 2, wantKey: "feed.time_zone", wantMsg: "unknown time zone",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.yaml, nil)
			var errs config.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v, want config.Errors", err)
			}
			if !errors.Is(err, config.ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid")
			}
			for _, e := range errs {
				if e.Line == tt.wantLine && e.Key == tt.wantKey && strings.Contains(e.Msg, tt.wantMsg) {
					if e.File != "/etc/calsyncd/config.yaml" || !strings.HasPrefix(e.Error(), "/etc/calsyncd/config.yaml:") {
						t.Errorf("error %q does not name the file", e)
					}
					return
				}
			}
			t.Fatalf("no error at line %d key %q containing %q; got:\n%v", tt.wantLine, tt.wantKey, tt.wantMsg, err)
		})
	}
}

func TestParseReportsEveryError(t *testing.T) {
	_, err := parse(t, `schedule: nonsense
writer:
  concurrency: 0
subscriptions:
  - id: Bad ID
    url: nope
`, nil)
	var errs config.Errors
	if !errors.As(err, &errs) || len(errs) < 4 {
		t.Fatalf("want at least 4 errors, got %v", err)
	}
	for i := 1; i < len(errs); i++ {
		if errs[i].Line < errs[i-1].Line {
			t.Errorf("errors not in file order: %v", err)
		}
	}
}

func TestErrorsNeverRepeatSecrets(t *testing.T) {
	_, err := parse(t, `subscriptions:
  - id: team
    url: gopher://example.com/private-${TOKEN}/a.ics
    calendar: a@example.com
`, map[string]string{"TOKEN": "tok-98765"})
	if err == nil || strings.Contains(err.Error(), "tok-98765") || strings.Contains(err.Error(), "private-") {
		t.Fatalf("error leaks the URL: %v", err)
	}
}

func TestRelativePathsAreAnchoredAtTheConfigFile(t *testing.T) {
	cfg, err := parse(t, "state_dir: state\ngoogle:\n  credentials_file: key.json\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.StateDir != "/etc/calsyncd/state" || cfg.Google.CredentialsFile != "/etc/calsyncd/key.json" {
		t.Errorf("state_dir %q credentials %q", cfg.StateDir, cfg.Google.CredentialsFile)
	}
	if cfg.DatabaseDSN() != "/etc/calsyncd/state/calsyncd.db" {
		t.Errorf("dsn %q", cfg.DatabaseDSN())
	}
}

func TestExampleConfigIsValid(t *testing.T) {
	path := filepath.Join("..", "..", "config.example.yaml")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("config.example.yaml: %v", err)
	}
	t.Setenv("TEAM_FEED_TOKEN", "example")
	if _, err := config.Load(path); err != nil {
		t.Fatalf("config.example.yaml does not validate:\n%v", err)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://calendar.google.com/calendar/ical/x/private-0123abcd/basic.ics?token=s3cret": "https://calendar.google.com/…",
		"https://user:pass@example.com/feed.ics":                                              "https://example.com/…",
		"webcal://p01-caldav.icloud.com/published/2/secret":                                   "webcal://p01-caldav.icloud.com/…",
		"file:///home/me/secret.ics":                                                          "file://…",
		"::not a url":                                                                         "<unparseable url>",
	} {
		if got := config.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWriterDefaultsAreTheWriters: the writer block's defaults are the
// writer's own (calsyncd.DefaultWriterLimits), and the block turns back
// into exactly those limits; retry_base and retry_cap reach the writer.
func TestWriterDefaultsAreTheWriters(t *testing.T) {
	if got, want := config.Default().Writer.Limits(), calsyncd.DefaultWriterLimits(); got != want {
		t.Errorf("config's writer defaults give %+v, want calsyncd.DefaultWriterLimits %+v", got, want)
	}
	cfg, err := parse(t, "writer:\n  retry_base: 500ms\n  retry_cap: 8s\n  spacing: 100ms\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Writer.Limits()
	if o.RetryBase != 500*time.Millisecond || o.RetryCap != 8*time.Second || o.Spacing != 100*time.Millisecond || o.MaxAttempts != 5 {
		t.Errorf("options from the file: %+v", o)
	}
}

// A key that cannot be decoded does not hide what the rules say of the
// others: one edit fixes every error.
func TestDecodeErrorsDoNotHideRuleErrors(t *testing.T) {
	_, err := parse(t, `schedule: "@every -1h"
writer:
  concurrency: [2]
subscriptions:
  - id: team
    url: https://example.com/team.ics
    calendar: team@example.com
    colour: banana
  - id: rota
    calendar: rota@example.com
`, nil)
	var errs config.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want errors, got %v", err)
	}
	want := []struct {
		line int
		key  string
	}{{1, "schedule"}, {3, "writer.concurrency"}, {8, "subscriptions[0].colour"}, {9, "subscriptions[1].url"}}
	for _, w := range want {
		found := false
		for _, e := range errs {
			found = found || e.Line == w.line && e.Key == w.key
		}
		if !found {
			t.Errorf("no error at line %d for %s in:\n%v", w.line, w.key, err)
		}
	}
	for i := 1; i < len(errs); i++ {
		if errs[i].Line < errs[i-1].Line {
			t.Errorf("errors not in file order: %v", err)
		}
	}
}

// Each zone is looked up once a load: every subscription that names an
// unknown one is still told so.
func TestEverySubscriptionWithAnUnknownZoneIsTold(t *testing.T) {
	_, err := parse(t, `subscriptions:
  - id: a
    url: https://example.com/a.ics
    calendar: a@example.com
    time_zone: Mars/Olympus
  - id: b
    url: https://example.com/b.ics
    calendar: b@example.com
    time_zone: Europe/Berlin
  - id: c
    url: https://example.com/c.ics
    calendar: c@example.com
    time_zone: Mars/Olympus
`, nil)
	var got []string
	var errs config.Errors
	errors.As(err, &errs)
	for _, e := range errs {
		got = append(got, fmt.Sprintf("%d %s", e.Line, e.Key))
	}
	if want := "5 subscriptions[0].time_zone,13 subscriptions[2].time_zone"; strings.Join(got, ",") != want {
		t.Errorf("errors %v, want %s", got, want)
	}
}
