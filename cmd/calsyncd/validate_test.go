package main

import (
	"os"
	"strings"
	"testing"
)

// unsetEnv unsets variables for the test (restored after it).
func unsetEnv(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		t.Setenv(n, "")
		os.Unsetenv(n)
	}
}

func TestValidateAllowUnset(t *testing.T) {
	unsetEnv(t, "FEED_TOKEN")
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", "state_dir: state\nsubscriptions:\n  - id: a\n"+
		"    url: https://example.com/private-${FEED_TOKEN}/a.ics\n    calendar: a@example.com\n")
	broken := writeFile(t, dir, "broken.yaml", "state_dir: state\nschedule: nonsense\nstatus:\n  token: ${FEED_TOKEN}\n")
	warning := "warning: " + cfg + ":4: subscriptions[0].url: environment variable FEED_TOKEN is not set (allowed by --allow-unset; run and sync refuse it)\n"

	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{"unset is an error by default", []string{"validate", "--config", cfg}, 1,
			cfg + ":4: subscriptions[0].url: environment variable FEED_TOKEN is not set\n"},
		{"allowed, it is a warning", []string{"validate", "--allow-unset", "--config", cfg}, 0,
			warning + "OK: " + cfg + " (1 subscriptions, 1 accounts)\n"},
		{"allowed, other errors still fail", []string{"validate", "--allow-unset", "--config", broken}, 1,
			"warning: " + broken + ":4: status.token: environment variable FEED_TOKEN is not set (allowed by --allow-unset; run and sync refuse it)\n" +
				broken + `:2: schedule: invalid cron spec "nonsense": expected exactly 5 fields, found 1: [nonsense]` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, code := run(t, tt.args...)
			if code != tt.wantCode || out != tt.wantOut {
				t.Errorf("code %d, out:\n%s\nwant code %d, out:\n%s", code, out, tt.wantCode, tt.wantOut)
			}
		})
	}
	// run and sync still refuse the file.
	for _, cmd := range []string{"sync", "run"} {
		if _, stderr, code := run(t, cmd, "--config", cfg); code != 1 || !strings.Contains(stderr, "FEED_TOKEN is not set") {
			t.Errorf("%s: code %d, stderr %q", cmd, code, stderr)
		}
	}
}
