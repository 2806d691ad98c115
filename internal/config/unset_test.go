package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/config"
)

func TestParseAllowUnset(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		env  map[string]string
		// wantUnset are the warnings, as printed.
		wantUnset []string
		// wantErr, when set, is a real error that must still be reported.
		wantErr string
		check   func(t *testing.T, cfg *config.Config)
	}{
		{
			name: "secret in a feed URL",
			yaml: `subscriptions:
  - id: team
    url: https://calendar.example.com/private-${TEAM_FEED_TOKEN}/basic.ics
    calendar: team@group.calendar.google.com
`,
			wantUnset: []string{"/etc/calsyncd/config.yaml:3: subscriptions[0].url: environment variable TEAM_FEED_TOKEN is not set"},
			check: func(t *testing.T, cfg *config.Config) {
				if got := cfg.Subscriptions[0].URL; got != "https://calendar.example.com/private-${TEAM_FEED_TOKEN}/basic.ics" {
					t.Errorf("url = %q, want the reference kept literally", got)
				}
			},
		},
		{
			name: "two variables in one value, one set",
			yaml: "subscriptions:\n  - id: a\n    url: https://example.com/a.ics\n    calendar: a@example.com\n" +
				"    headers:\n      Authorization: ${SCHEME} ${TOKEN} ${OTHER}\n",
			env: map[string]string{"SCHEME": "Bearer"},
			wantUnset: []string{
				"/etc/calsyncd/config.yaml:6: subscriptions[0].headers.Authorization: environment variable TOKEN is not set",
				"/etc/calsyncd/config.yaml:6: subscriptions[0].headers.Authorization: environment variable OTHER is not set",
			},
			check: func(t *testing.T, cfg *config.Config) {
				if got := cfg.Subscriptions[0].Headers["Authorization"]; got != "Bearer ${TOKEN} ${OTHER}" {
					t.Errorf("header = %q", got)
				}
			},
		},
		{
			// The placeholder is not empty, so checks that depend on a key
			// holding something (a public listener needs a token) pass.
			name:      "unset status token with a public listener",
			yaml:      "listen: 0.0.0.0:8765\nstatus:\n  token: ${CALSYNCD_STATUS_TOKEN}\n",
			wantUnset: []string{"/etc/calsyncd/config.yaml:3: status.token: environment variable CALSYNCD_STATUS_TOKEN is not set"},
		},
		{
			// A key whose value is unknown is not judged: "${N}" is not a
			// number, but the real value may well be.
			name:      "unset number",
			yaml:      "writer:\n  concurrency: ${N}\n",
			wantUnset: []string{"/etc/calsyncd/config.yaml:2: writer.concurrency: environment variable N is not set"},
			check: func(t *testing.T, cfg *config.Config) {
				if cfg.Writer.Concurrency != 2 {
					t.Errorf("concurrency = %d, want the default", cfg.Writer.Concurrency)
				}
			},
		},
		{
			name:      "other errors are still errors",
			yaml:      "schedule: nonsense\nstatus:\n  token: ${T}\n",
			wantUnset: []string{"/etc/calsyncd/config.yaml:3: status.token: environment variable T is not set"},
			wantErr:   "/etc/calsyncd/config.yaml:1: schedule: invalid cron spec",
		},
		{
			name: "everything set: no warnings",
			yaml: "status:\n  token: ${T}\n",
			env:  map[string]string{"T": "s3cret"},
			check: func(t *testing.T, cfg *config.Config) {
				if cfg.Status.Token != "s3cret" {
					t.Errorf("token not expanded")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			cfg, unset, err := config.ParseAllowUnset("/etc/calsyncd/config.yaml", []byte(tt.yaml), lookup)
			var got []string
			for _, u := range unset {
				got = append(got, u.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.wantUnset, "\n") {
				t.Errorf("unset warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.wantUnset, "\n"))
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, config.ErrInvalid) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if tt.check != nil {
				tt.check(t, cfg)
			}
			// Without the allowance the same file is refused, naming the
			// first unset variable.
			if _, err := config.Parse("/etc/calsyncd/config.yaml", []byte(tt.yaml), lookup); (err == nil) != (len(tt.wantUnset) == 0) {
				t.Errorf("Parse: err = %v with %d unset variables", err, len(tt.wantUnset))
			}
		})
	}
}

func TestAllowUnsetNeverRepeatsSecrets(t *testing.T) {
	_, unset, err := config.ParseAllowUnset("/etc/calsyncd/config.yaml", []byte(`subscriptions:
  - id: team
    url: https://example.com/private-${TOKEN}/a-${MISSING}.ics
    calendar: a@example.com
    headers: {X-Key: "${TOKEN}", X-Other: "${ALSO_MISSING}"}
`), func(k string) (string, bool) { return "tok-98765", k == "TOKEN" })
	if err != nil || len(unset) != 2 {
		t.Fatalf("err = %v, unset = %v", err, unset)
	}
	if s := unset.Error(); strings.Contains(s, "tok-98765") || strings.Contains(s, "private-") {
		t.Errorf("warnings leak a secret: %s", s)
	}
}

// The example ships with one ${VAR}: with the allowance it loads with
// exactly that warning; without the variable it is refused.
func TestExampleConfigValidatesWithAllowUnset(t *testing.T) {
	path := filepath.Join("..", "..", "config.example.yaml")
	t.Setenv("TEAM_FEED_TOKEN", "") // restored after the test
	os.Unsetenv("TEAM_FEED_TOKEN")
	if _, err := config.Load(path); err == nil || !strings.Contains(err.Error(), "TEAM_FEED_TOKEN is not set") {
		t.Errorf("Load without TEAM_FEED_TOKEN: err = %v", err)
	}
	_, unset, err := config.LoadAllowUnset(path)
	if err != nil {
		t.Fatalf("config.example.yaml does not validate with unset variables allowed:\n%v", err)
	}
	if len(unset) != 1 || unset[0].Key != "subscriptions[0].url" || !strings.Contains(unset[0].Msg, "TEAM_FEED_TOKEN") {
		t.Errorf("unset = %v", unset)
	}
}
