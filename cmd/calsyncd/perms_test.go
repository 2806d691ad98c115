package main

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/config"
)

// --strict-perms and the configuration's files, the main one and an
// included one alike: a file others may change is refused with the flag
// and warned about without it; a readable file with secrets written in it
// is only warned about.
func TestStrictPermsConfigFile(t *testing.T) {
	t.Setenv("CALSYNCD_TEST_STATUS_TOKEN", "status-from-env")
	t.Setenv("CALSYNCD_TEST_FEED_PASSWORD", "password-from-env")
	secretsOf := map[string][2]string{
		"none":    {"", ""},
		"env":     {"${CALSYNCD_TEST_STATUS_TOKEN}", "${CALSYNCD_TEST_FEED_PASSWORD}"},
		"literal": {"status-literal", "password-literal"},
	}
	const silent, warn, refuse = "silent", "warn", "refuse"
	// For each mode: the outcome without secrets, with ${VAR} secrets and
	// with literal ones, first without --strict-perms, then with it.
	tests := []struct {
		mode               os.FileMode
		none, env, literal [2]string
	}{
		{0o600, [2]string{silent, silent}, [2]string{silent, silent}, [2]string{silent, silent}},
		{0o640, [2]string{silent, silent}, [2]string{silent, silent}, [2]string{silent, silent}},
		{0o644, [2]string{silent, silent}, [2]string{silent, silent}, [2]string{warn, warn}},
		{0o664, [2]string{silent, silent}, [2]string{warn, refuse}, [2]string{warn, refuse}},
		{0o666, [2]string{warn, refuse}, [2]string{warn, refuse}, [2]string{warn, refuse}},
		{0o606, [2]string{warn, refuse}, [2]string{warn, refuse}, [2]string{warn, refuse}},
	}
	for _, tt := range tests {
		for secrets, want := range map[string][2]string{"none": tt.none, "env": tt.env, "literal": tt.literal} {
			for i, strict := range []bool{false, true} {
				for _, included := range []bool{false, true} {
					t.Run(fmt.Sprintf("%04o/%s/strict=%v/included=%v", tt.mode, secrets, strict, included), func(t *testing.T) {
						body := "state_dir: state\ngoogle:\n  endpoint: http://127.0.0.1:1/\n"
						token, password := secretsOf[secrets][0], secretsOf[secrets][1]
						if token != "" {
							body += "status:\n  token: " + token + "\n"
						}
						sub := "subscriptions:\n  - id: a\n    url: https://feeds.example.invalid/a.ics\n    calendar: a@example.com\n"
						if password != "" {
							sub += "    basic_auth:\n      username: u\n      password: " + password + "\n"
						}
						dir := t.TempDir()
						path := filepath.Join(dir, "config.yaml")
						if included {
							// The main file holds the status token and stays
							// closed; the included file holds the password.
							writeFile(t, dir, "config.yaml", body+"include: [subscriptions.d]\n")
							os.Mkdir(filepath.Join(dir, "subscriptions.d"), 0o700)
							path = writeFile(t, dir, "subscriptions.d/a.yaml", sub)
						} else {
							writeFile(t, dir, "config.yaml", body+sub)
						}
						cfg, err := config.Load(filepath.Join(dir, "config.yaml"))
						if err != nil {
							t.Fatal(err)
						}
						os.Chmod(path, tt.mode)
						var logs bytes.Buffer
						err = checkSecretFiles(slog.New(slog.NewTextHandler(&logs, nil)), cfg, strict)

						got := silent
						switch {
						case err != nil:
							got = refuse
						case logs.Len() > 0:
							got = warn
						}
						if got != want[i] {
							t.Fatalf("%s, want %s (err %v)\n%s", got, want[i], err, logs.String())
						}
						if err != nil {
							var ee *exitError
							msg := err.Error()
							if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(msg, "refusing to start (--strict-perms)") ||
								!strings.Contains(msg, path) || !strings.Contains(msg, fmt.Sprintf("mode %04o", tt.mode)) ||
								!strings.Contains(msg, "chmod 600 "+path) {
								t.Errorf("refusal = %v", err)
							}
						}
						if got != silent && !strings.Contains(logs.String(), path) {
							t.Errorf("the warning does not name the file:\n%s", logs.String())
						}
						out := logs.String()
						if err != nil {
							out += err.Error()
						}
						for _, secret := range []string{"status-literal", "password-literal", "status-from-env", "password-from-env"} {
							if strings.Contains(out, secret) {
								t.Errorf("a secret leaks: %s", out)
							}
						}
					})
				}
			}
		}
	}
}

// auth status shows the configuration file's problem and, with
// --strict-perms, fails on a file others may change.
func TestAuthStatusConfigFilePerms(t *testing.T) {
	path := writeFile(t, t.TempDir(), "config.yaml", "state_dir: state\ngoogle:\n  endpoint: http://127.0.0.1:1/\nstatus:\n  token: status-literal\n"+
		"subscriptions:\n  - id: a\n    url: https://feeds.example.invalid/a.ics\n    calendar: a@example.com\n")
	for _, tt := range []struct {
		mode     os.FileMode
		strict   bool
		wantCode int
		want     string
	}{
		{0o600, true, 0, ""},
		{0o644, true, 0, "is readable by others (mode 0644) and holds secrets written in it (status.token)"},
		{0o666, false, 0, "is writable by others (mode 0666) and holds secrets (status.token)"},
		{0o666, true, 1, "is writable by others (mode 0666)"},
	} {
		t.Run(fmt.Sprintf("%04o/strict=%v", tt.mode, tt.strict), func(t *testing.T) {
			os.Chmod(path, tt.mode)
			args := []string{"auth", "status", "--config", path}
			if tt.strict {
				args = append(args, "--strict-perms")
			}
			out, stderr, code := run(t, args...)
			if code != tt.wantCode {
				t.Errorf("code %d, want %d\n%s\n%s", code, tt.wantCode, out, stderr)
			}
			if tt.want == "" && strings.Contains(out, "configuration file") || !strings.Contains(out, tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
			if strings.Contains(out+stderr, "status-literal") {
				t.Errorf("auth status prints the secret:\n%s\n%s", out, stderr)
			}
		})
	}
}
