package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// TestFlagsGoAnywhere: flags after an id are flags (`sync family --json`),
// and "--" makes what follows ids.
func TestFlagsGoAnywhere(t *testing.T) {
	fake := gcalfake.New(gcalfake.Options{})
	fake.AddCalendar("team@example.com", "UTC")
	api := httptest.NewServer(fake)
	defer api.Close()
	body, err := os.ReadFile("../../testdata/feeds/team.ics")
	if err != nil {
		t.Fatal(err)
	}
	feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer feeds.Close()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", "state_dir: state\ngoogle:\n  endpoint: "+api.URL+gcalfake.BasePath+
		"\nsubscriptions:\n  - id: team\n    url: "+feeds.URL+"/team.ics\n    calendar: team@example.com\n")
	for _, args := range [][]string{
		{"sync", "team", "--config", cfg, "--json"},
		{"sync", "--config", cfg, "team", "--json", "--dry-run"},
		{"sync", "team", "--json", "--config=" + cfg},
	} {
		out, stderr, code := run(t, args...)
		if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "{") {
			t.Errorf("%v: code %d\n%s\n%s", args, code, out, stderr)
			continue
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out), &doc); err != nil || (doc["subscriptions"] == nil) {
			t.Errorf("%v: not an object with subscriptions: %v\n%s", args, err, out)
		}
	}
	_, stderr, code := run(t, "sync", "--config", cfg, "--", "--json")
	if code != 2 || !strings.Contains(stderr, `no subscription with id "--json"`) {
		t.Errorf("after --: code %d\n%s", code, stderr)
	}
	if _, stderr, code := run(t, "status", "--config", cfg, "extra"); code != 2 || !strings.Contains(stderr, "unexpected arguments: extra") {
		t.Errorf("status with an argument: code %d\n%s", code, stderr)
	}
}

// TestHelpExitsZeroWithExamplesAndExitCodes: -h and --help are an answer,
// not a mistake.
func TestHelpExitsZeroWithExamplesAndExitCodes(t *testing.T) {
	for _, args := range [][]string{
		{"sync", "-h"}, {"sync", "--help"}, {"run", "-h"}, {"status", "--help"}, {"check", "-h"},
		{"validate", "-h"}, {"demo", "-h"}, {"auth", "login", "-h"}, {"auth", "status", "--help"}, {"help", "sync"},
		{"version", "-h"},
	} {
		out, stderr, code := run(t, args...)
		text := out + stderr
		if code != 0 {
			t.Errorf("%v: exit %d, want 0\n%s", args, code, text)
		}
		for _, want := range []string{"Usage: calsyncd", "Flags:", "Examples:", "Exit status:"} {
			if !strings.Contains(text, want) {
				t.Errorf("%v: no %q in\n%s", args, want, text)
			}
		}
	}
	if _, stderr, code := run(t, "--help"); code != 0 || !strings.Contains(stderr, "Exit status:") {
		t.Errorf("--help: exit %d\n%s", code, stderr)
	}
	if _, _, code := run(t); code != 2 {
		t.Errorf("no command: exit %d, want 2", code)
	}
}

func TestVersionIsTheRelease(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, _, code := run(t, args...)
		if code != 0 || !strings.HasPrefix(out, "calsyncd "+release) || strings.Contains(out, "dev") {
			t.Errorf("%v: exit %d, %q", args, code, out)
		}
	}
	for _, tc := range []struct {
		b    buildInfo
		want string
	}{
		{buildInfo{Version: "0.9.0"}, "0.9.0"},
		{buildInfo{Version: "0.9.0", GoVersion: "go1.26.8"}, "0.9.0 (go1.26.8)"},
		{buildInfo{Version: "0.9.0", Revision: "3f0542a1b2c3d4e5f6", GoVersion: "go1.26.8"}, "0.9.0 (3f0542a1b2c3, go1.26.8)"},
		{buildInfo{Version: "1.0.0", Revision: "abc", Modified: true}, "1.0.0 (abc, modified)"},
	} {
		if got := tc.b.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.b, got, tc.want)
		}
	}
}

// TestConfigDefaultsToTheInstalledPath: --config comes from
// $CALSYNCD_CONFIG, else /etc/calsyncd/config.yaml; a missing file is a
// usage mistake that says how to name one.
func TestConfigDefaultsToTheInstalledPath(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "config.yaml", "state_dir: state\n")
	t.Setenv(configEnv, cfg)
	if out, stderr, code := run(t, "validate"); code != 0 || !strings.Contains(out, cfg) {
		t.Errorf("validate with $%s: exit %d\n%s%s", configEnv, code, out, stderr)
	}
	t.Setenv(configEnv, "")
	missing := t.TempDir() + "/etc/calsyncd/config.yaml"
	installedConfig = missing
	defer func() { installedConfig = DefaultConfigPath }()
	for _, cmd := range []string{"validate", "status", "check", "sync", "run"} {
		_, stderr, code := run(t, cmd)
		if code != 2 || !strings.Contains(stderr, "no configuration file at "+missing) || !strings.Contains(stderr, configEnv) {
			t.Errorf("%s without a config: exit %d\n%s", cmd, code, stderr)
		}
	}
}

// TestCheckOfAMissingFileFeedSaysWhereFeedsLive: a file feed's failure
// names the file and the unit's hidden directories, not networks and TLS.
func TestCheckOfAMissingFileFeedSaysWhereFeedsLive(t *testing.T) {
	dir := t.TempDir()
	missing := dir + "/feeds/x.ics"
	cfg := writeFile(t, dir, "config.yaml", "state_dir: state\ngoogle:\n  endpoint: http://127.0.0.1:9/calendar/v3\nsubscriptions:\n  - id: local\n    url: file://"+missing+"\n    calendar: primary\n")
	out, _, code := run(t, "check", "--config", cfg)
	if code != 1 || !strings.Contains(out, missing) || !strings.Contains(out, "ProtectHome") || strings.Contains(out, "curl") {
		t.Errorf("check: exit %d\n%s", code, out)
	}
}

// TestAConfigWithoutCredentialsIsWarnedAndRunRefuses: no credentials and
// no endpoint validated silently and run started, to fail every write.
func TestAConfigWithoutCredentialsIsWarnedAndRunRefuses(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", "state_dir: state\nlisten: 127.0.0.1:1\nsubscriptions:\n  - id: a\n    url: https://feeds.invalid/a.ics\n    calendar: primary\n")
	out, _, code := run(t, "validate", "--config", cfg)
	if code != 0 || !strings.Contains(out, `account "default" has no credentials_file and no google.endpoint`) ||
		!strings.Contains(out, "calsyncd demo --config") || !strings.Contains(out, "(1 subscription, 1 account)") {
		t.Errorf("validate: exit %d\n%s", code, out)
	}
	_, stderr, code := run(t, "run", "--config", cfg)
	if code != 1 || !strings.Contains(stderr, "no credentials for 1 account default") {
		t.Errorf("run: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(dir + "/state"); !os.IsNotExist(err) {
		t.Errorf("a refused run made its state directory (%v)", err)
	}
	out, _, _ = run(t, "auth", "status", "--config", cfg)
	if strings.Contains(out, "emulator") || !strings.Contains(out, "no credentials") {
		t.Errorf("auth status calls no credentials an emulator:\n%s", out)
	}
}

func TestATabInTheIndentationSaysSo(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "config.yaml", "state_dir: state\nsubscriptions:\n\t- id: a\n")
	out, _, code := run(t, "validate", "--config", cfg)
	if code != 1 || !strings.Contains(out, "indented with a tab: YAML needs spaces") {
		t.Errorf("validate: exit %d\n%s", code, out)
	}
}
