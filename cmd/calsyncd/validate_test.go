package main

import (
	"bytes"
	"errors"
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
	cfg := writeFile(t, dir, "config.yaml", "state_dir: state\ngoogle:\n  credentials_file: key.json\nsubscriptions:\n  - id: a\n"+
		"    url: https://example.com/private-${FEED_TOKEN}/a.ics\n    calendar: a@example.com\n")
	broken := writeFile(t, dir, "broken.yaml", "state_dir: state\nschedule: nonsense\nstatus:\n  token: ${FEED_TOKEN}\n")
	warning := "warning: " + cfg + ":6: subscriptions[0].url: environment variable FEED_TOKEN is not set (allowed by --allow-unset; run and sync refuse it)\n"

	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{"unset is an error by default", []string{"validate", "--config", cfg}, 1,
			cfg + ":6: subscriptions[0].url: environment variable FEED_TOKEN is not set\n"},
		{"allowed, it is a warning", []string{"validate", "--allow-unset", "--config", cfg}, 0,
			warning + "OK: " + cfg + " (1 subscription, 1 account)\n"},
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

func TestValidateWarnsAboutTheSameFeedTwice(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", `state_dir: state
subscriptions:
  - id: team
    url: https://calendar.example.com/private-tok123/basic.ics
    calendar: team@group.calendar.google.com
  - id: team-copy
    url: https://calendar.example.com/private-tok123/basic.ics
    calendar: team@group.calendar.google.com
`)
	out, _, code := run(t, "validate", "--config", cfg)
	if code != 0 || !strings.Contains(out, "OK") {
		t.Fatalf("code %d out %q", code, out)
	}
	if !strings.Contains(out, "warning: "+cfg+":6: subscriptions[1]:") || !strings.Contains(out, "line 3") {
		t.Errorf("no warning naming both subscriptions' lines:\n%s", out)
	}
	if strings.Contains(out, "tok123") {
		t.Errorf("the warning leaks the feed URL:\n%s", out)
	}
}

// A configuration's text reaches the terminal in validate's errors (an
// unknown key is repeated); it is escaped there.
func TestValidateEscapesControlCharacters(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", "state_dir: state\n\"\\e[31mevil\\rOK\": 1\n")
	out, _, code := run(t, "validate", "--config", cfg)
	if code != 1 {
		t.Fatalf("code %d out %q", code, out)
	}
	if strings.ContainsAny(out, "\x1b\r") || !strings.Contains(out, `\x1b[31mevil\rOK`) {
		t.Errorf("validate printed %q", out)
	}
}

func TestErrorsAreEscapedOnStderr(t *testing.T) {
	var stderr bytes.Buffer
	code := exitCode(&stderr, errors.New("feed: the feed server answered 503 \x1b[31mall good\rOK\nsecond line"))
	if code != 1 {
		t.Errorf("code %d", code)
	}
	got := stderr.String()
	if strings.ContainsAny(got, "\x1b\r") || !strings.Contains(got, `\x1b[31mall good\rOK`+"\nsecond line") {
		t.Errorf("stderr = %q", got)
	}
	stderr.Reset()
	exitCode(&stderr, &exitError{code: 2, err: errors.New("bad \x1b]0;title\x07")})
	if strings.ContainsAny(stderr.String(), "\x1b\x07") {
		t.Errorf("stderr = %q", stderr.String())
	}
}
