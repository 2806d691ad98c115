package googleauth_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/googleauth"
)

// configWith is a configuration whose secrets are given by secrets: "none",
// "env" (every one a ${VAR}), "literal" (written in the file) or "mixed".
func configWith(t *testing.T, secrets string) string {
	t.Helper()
	t.Setenv("CALSYNCD_TEST_STATUS_TOKEN", "status-from-env")
	t.Setenv("CALSYNCD_TEST_FEED_PASSWORD", "password-from-env")
	var token, password string
	switch secrets {
	case "env":
		token, password = "${CALSYNCD_TEST_STATUS_TOKEN}", "${CALSYNCD_TEST_FEED_PASSWORD}"
	case "literal":
		token, password = "status-literal", "password-literal"
	case "mixed":
		token, password = "${CALSYNCD_TEST_STATUS_TOKEN}", "password-literal"
	}
	body := "state_dir: state\ngoogle:\n  endpoint: http://127.0.0.1:1/\n"
	if token != "" {
		body += "status:\n  token: " + token + "\n"
	}
	body += "subscriptions:\n  - id: a\n    url: https://feeds.example.invalid/a.ics\n    calendar: a@example.com\n"
	if password != "" {
		body += "    basic_auth:\n      username: u\n      password: " + password + "\n"
	}
	return body
}

func TestCheckConfigFile(t *testing.T) {
	const (
		silent   = ""
		readable = "readable"
		writable = "writable"
	)
	// What each mode gives for a file without secrets, with secrets only in
	// ${VAR}s, and with secrets written in it.
	tests := []struct {
		mode               os.FileMode
		none, env, literal []string
	}{
		{0o600, nil, nil, nil},
		{0o640, nil, nil, nil},
		{0o644, nil, nil, []string{readable}},
		{0o664, nil, []string{writable}, []string{writable, readable}},
		{0o666, []string{writable}, []string{writable}, []string{writable, readable}},
		{0o606, []string{writable}, []string{writable}, []string{writable, readable}},
	}
	for _, tt := range tests {
		for secrets, want := range map[string][]string{"none": tt.none, "env": tt.env, "literal": tt.literal} {
			t.Run(tt.mode.String()+"/"+secrets, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "config.yaml")
				if err := os.WriteFile(path, []byte(configWith(t, secrets)), 0o600); err != nil {
					t.Fatal(err)
				}
				cfg, err := config.Load(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tt.mode); err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, p := range googleauth.CheckConfigFile(cfg) {
					got = append(got, map[bool]string{true: writable, false: readable}[p.Writable])
					s := p.String()
					if p.Path != path || p.Mode != tt.mode || !strings.Contains(s, path) || !strings.Contains(s, "chmod 600 "+path) ||
						!strings.Contains(s, "chmod 640 "+path) || !strings.Contains(s, fmt.Sprintf("mode %04o", tt.mode)) {
						t.Errorf("problem %+v: %s", p, s)
					}
					for _, secret := range []string{"status-literal", "password-literal", "status-from-env", "password-from-env"} {
						if strings.Contains(s, secret) {
							t.Errorf("the problem quotes a secret: %s", s)
						}
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("problems %v, want %v", got, want)
				}
			})
		}
	}
}

// Only the secrets written in the file make a readable file a problem, and
// the problem names those, not the ${VAR}s.
func TestCheckConfigFileNamesTheLiteralSecrets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(path, []byte(configWith(t, "mixed")), 0o600)
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o666)
	got := googleauth.CheckConfigFile(cfg)
	if len(got) != 2 {
		t.Fatalf("problems = %+v, want writable and readable", got)
	}
	if want := []string{"status.token", "subscriptions[0].basic_auth.password"}; !slices.Equal(got[0].Keys, want) {
		t.Errorf("writable: keys %v, want every secret %v", got[0].Keys, want)
	}
	if want := []string{"subscriptions[0].basic_auth.password"}; !slices.Equal(got[1].Keys, want) {
		t.Errorf("readable: keys %v, want the literal %v", got[1].Keys, want)
	}
	if s := got[0].String(); !strings.Contains(s, "mode 0666") || !strings.Contains(s, "writable by others") {
		t.Errorf("String() = %s", s)
	}
}

// Each of the configuration's files is checked for the secrets written in
// it, named by the keys it writes: an included file's subscriptions are
// its own list.
func TestCheckConfigFileChecksIncludedFiles(t *testing.T) {
	t.Setenv("CALSYNCD_TEST_FEED_TOKEN", "token-from-env")
	dir := t.TempDir()
	main := filepath.Join(dir, "config.yaml")
	inc := filepath.Join(dir, "more.yaml")
	os.WriteFile(main, []byte("state_dir: state\ngoogle:\n  endpoint: http://127.0.0.1:1/\nstatus:\n  token: status-literal\ninclude: [more.yaml]\n"+
		"subscriptions:\n  - id: a\n    url: https://feeds.example.invalid/a.ics\n    calendar: a@example.com\n"), 0o600)
	os.WriteFile(inc, []byte("subscriptions:\n  - id: b\n    url: https://feeds.example.invalid/b.ics\n    calendar: b@example.com\n"+
		"    headers: {Authorization: 'Bearer ${CALSYNCD_TEST_FEED_TOKEN}'}\n"+
		"  - id: c\n    url: https://feeds.example.invalid/c.ics\n    calendar: c@example.com\n"+
		"    basic_auth: {username: u, password: password-literal}\n"), 0o600)
	cfg, err := config.Load(main)
	if err != nil {
		t.Fatal(err)
	}
	type problem struct {
		path     string
		writable bool
		keys     string
	}
	for _, tt := range []struct {
		name      string
		main, inc os.FileMode
		want      []problem
	}{
		{"both closed", 0o600, 0o600, nil},
		{"the included file readable", 0o600, 0o644, []problem{{inc, false, "subscriptions[1].basic_auth.password"}}},
		{"the included file group-writable", 0o600, 0o660, []problem{
			{inc, true, "subscriptions[0].headers.Authorization,subscriptions[1].basic_auth.password"}}},
		{"both world-writable", 0o666, 0o666, []problem{
			{main, true, "status.token"}, {main, false, "status.token"},
			{inc, true, "subscriptions[0].headers.Authorization,subscriptions[1].basic_auth.password"},
			{inc, false, "subscriptions[1].basic_auth.password"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Chmod(main, tt.main)
			os.Chmod(inc, tt.inc)
			var got []problem
			for _, p := range googleauth.CheckConfigFile(cfg) {
				got = append(got, problem{p.Path, p.Writable, strings.Join(p.Keys, ",")})
				for _, secret := range []string{"status-literal", "password-literal", "token-from-env"} {
					if strings.Contains(p.String(), secret) {
						t.Errorf("the problem quotes a secret: %s", p)
					}
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("problems %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
