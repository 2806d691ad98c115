package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/calsyncd/calsyncd/internal/config"
)

// `--config /dev/zero` read until memory ran out: only regular
// files of at most config.MaxFileSize are read.
func TestLoadRefusesWhatIsNotAConfigFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("state_dir: /tmp\n"+strings.Repeat("# padding padding padding\n", config.MaxFileSize/20)), 0o600); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(dir, "pipe.yaml")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct{ path, says string }{
		"too large":   {big, "larger than 1MiB"},
		"/dev/zero":   {"/dev/zero", "not a regular file"},
		"a FIFO":      {pipe, "not a regular file"},
		"a directory": {dir, "not a regular file"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(tt.path); err != nil {
				t.Skipf("%s: %v", tt.path, err)
			}
			_, err := config.Load(tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("Load(%s) = %v, want an error saying %q", tt.path, err, tt.says)
			}
		})
	}
}

func TestLoadReadsAFileJustUnderTheCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	body := "state_dir: /tmp\n"
	body += strings.Repeat("#", config.MaxFileSize-len(body)-1) + "\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(path); err != nil {
		t.Fatal(err)
	}
}

// Two subscriptions with the same feed and calendar double every event:
// the configuration is valid, with a warning naming both.
func TestSameFeedAndCalendarTwiceWarns(t *testing.T) {
	cfg, err := parse(t, `subscriptions:
  - id: team
    url: https://calendar.example.com/ical/private-tok123/basic.ics?key=q-secret
    calendar: team@group.calendar.google.com
  - id: other
    url: https://calendar.example.com/ical/other.ics
    calendar: team@group.calendar.google.com
  - id: team-again
    url: webcal://Calendar.Example.com:443/ical/private-tok123/basic.ics?key=q-secret
    calendar: Team@group.calendar.google.com
  - id: team-elsewhere
    url: https://calendar.example.com/ical/private-tok123/basic.ics?key=q-secret
    calendar: elsewhere@group.calendar.google.com
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws := withoutCredentialWarnings(cfg.Warnings)
	if len(ws) != 1 {
		t.Fatalf("warnings = %v, want one", ws)
	}
	w := ws[0]
	msg := w.String()
	if w.Line != 8 || w.Key != "subscriptions[2]" || !strings.Contains(msg, "/etc/calsyncd/config.yaml:8:") {
		t.Errorf("warning at %d %q: %s", w.Line, w.Key, msg)
	}
	for _, want := range []string{`"team-again"`, `"team"`, "line 2", "twice", "webcal://Calendar.Example.com:443/…"} {
		if !strings.Contains(msg, want) {
			t.Errorf("warning %q lacks %q", msg, want)
		}
	}
	for _, secret := range []string{"tok123", "q-secret", "/ical"} {
		if strings.Contains(msg, secret) {
			t.Errorf("warning %q leaks %q", msg, secret)
		}
	}
}

// withoutCredentialWarnings leaves out the warning of an account without
// credentials, which tests' configs that never talk to Google all get.
func withoutCredentialWarnings(ws []config.Warning) []config.Warning {
	var out []config.Warning
	for _, w := range ws {
		if !strings.Contains(w.Msg, "has no credentials_file and no google.endpoint") {
			out = append(out, w)
		}
	}
	return out
}
