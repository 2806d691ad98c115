package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

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
// unknown key is repeated); it is escaped there (issue 15, bug 6).
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
