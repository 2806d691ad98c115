package googleauth_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/googleauth"
)

// ownedBy is a FakeOwners owner function: the named files and directories
// belong to the given uid and gid, the rest to whoever really owns them.
func ownedBy(owners map[string][2]int) func(string) (int, int, bool) {
	return func(name string) (int, int, bool) {
		o, ok := owners[name]
		return o[0], o[1], ok
	}
}

// A command run as root (check, auth status, sync --dry-run) refreshes an
// expired token in a file the service's user owns: the file must stay the
// service's, with its mode, or the service is locked out. A user who is
// neither must leave the file alone and use the token in memory.
func TestRefreshKeepsTheTokenFileItsOwners(t *testing.T) {
	const service, group, other = 999, 998, 1000
	tests := []struct {
		name      string
		euid      int
		fileUID   int
		mode      os.FileMode
		wantSaved bool
		wantChown [][2]int
		wantMode  os.FileMode
	}{
		{name: "the service's user, its own file", euid: service, fileUID: service, mode: 0o600,
			wantSaved: true, wantMode: 0o600},
		{name: "root, its own file", euid: 0, fileUID: 0, mode: 0o600,
			wantSaved: true, wantMode: 0o600},
		{name: "root, the service's file", euid: 0, fileUID: service, mode: 0o600,
			wantSaved: true, wantChown: [][2]int{{service, group}}, wantMode: 0o600},
		{name: "root, the service's file shared with its group", euid: 0, fileUID: service, mode: 0o640,
			wantSaved: true, wantChown: [][2]int{{service, group}}, wantMode: 0o640},
		{name: "another user, the service's file", euid: other, fileUID: service, mode: 0o640,
			wantSaved: false, wantMode: 0o640},
	}
	for _, tt := range tests {
		for _, via := range []string{"Load", "Inspect"} {
			t.Run(tt.name+"/"+via, func(t *testing.T) {
				oauth := newFakeOAuth(t)
				cfg, dir := setup(t, map[string]string{
					"config.yaml":              "state_dir: state\ngoogle:\n  credentials_file: client.json\n",
					"client.json":              oauth.desktopClient(),
					"state/token-default.json": tokenJSON("stale-access", "refresh-0", time.Now().Add(-time.Hour)),
				})
				path := filepath.Join(dir, "state", "token-default.json")
				if err := os.Chmod(path, tt.mode); err != nil {
					t.Fatal(err)
				}
				before, _ := os.ReadFile(path)
				machine := &googleauth.FakeOwners{EUID: tt.euid, Owner: ownedBy(map[string][2]int{"token-default.json": {tt.fileUID, group}})}
				var logs bytes.Buffer
				opts := googleauth.WithOwners(googleauth.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, machine)

				switch via {
				case "Load":
					creds, err := googleauth.Load(context.Background(), cfg, "", opts)
					if err != nil {
						t.Fatal(err)
					}
					for range 3 {
						if tok, err := creds.TokenSource.Token(); err != nil || tok.AccessToken != "access-1" {
							t.Fatalf("Token = %v, %v", tok, err)
						}
					}
				case "Inspect":
					st := googleauth.Inspect(context.Background(), cfg, "", opts)
					if st.Err != nil {
						t.Fatal(st.Err)
					}
					want := "refreshed and saved"
					if !tt.wantSaved {
						want = "not saved: token file " + path + " is owned by user999; run this command as user999"
					}
					if !strings.Contains(st.Token, want) {
						t.Errorf("status token = %q, want it to say %q", st.Token, want)
					}
				}
				if len(oauth.refreshTokens) != 1 {
					t.Errorf("refreshes = %d, want 1", len(oauth.refreshTokens))
				}

				after, _ := os.ReadFile(path)
				saved, err := googleauth.ReadToken(path)
				if err != nil {
					t.Fatal(err)
				}
				if tt.wantSaved && saved.AccessToken != "access-1" {
					t.Errorf("saved access token = %q, want the refreshed access-1", saved.AccessToken)
				}
				if !tt.wantSaved && !bytes.Equal(before, after) {
					t.Errorf("another user's token file was rewritten:\n%s", after)
				}
				if got := machine.Chowned(); len(got) != len(tt.wantChown) || len(got) > 0 && got[0] != tt.wantChown[0] {
					t.Errorf("files handed to %v, want %v", got, tt.wantChown)
				}
				if m := fileMode(t, path); m != tt.wantMode {
					t.Errorf("mode = %04o, want %04o", m, tt.wantMode)
				}
				warned := strings.Count(logs.String(), "not saved: its file belongs to another user")
				if wantWarn := map[bool]int{true: 0, false: 1}[tt.wantSaved]; warned != wantWarn {
					t.Errorf("warnings = %d, want %d:\n%s", warned, wantWarn, logs.String())
				}
				if !tt.wantSaved && !strings.Contains(logs.String(), "owner=user999") {
					t.Errorf("the warning does not name the owner:\n%s", logs.String())
				}
				for _, secret := range []string{"stale-access", "refresh-0", "access-1"} {
					if strings.Contains(logs.String(), secret) {
						t.Errorf("the log leaks %s:\n%s", secret, logs.String())
					}
				}
				leftovers, _ := filepath.Glob(filepath.Join(dir, "state", ".*"))
				if len(leftovers) > 0 {
					t.Errorf("temporary files left behind: %v", leftovers)
				}

				// Then the service starts, as the file's owner: it reads the
				// file, and uses what root saved without a new refresh.
				svc := &googleauth.FakeOwners{EUID: tt.fileUID, Owner: machine.Owner}
				creds, err := googleauth.Load(context.Background(), cfg, "", googleauth.WithOwners(googleauth.Options{}, svc))
				if err != nil {
					t.Fatalf("the service cannot load its token after the run: %v", err)
				}
				tok, err := creds.TokenSource.Token()
				if err != nil {
					t.Fatal(err)
				}
				if tt.wantSaved && (tok.AccessToken != "access-1" || len(oauth.refreshTokens) != 1) {
					t.Errorf("service token %q after %d refreshes, want the saved access-1 after 1", tok.AccessToken, len(oauth.refreshTokens))
				}
			})
		}
	}
}

// Permission denied on the token is no reason to log in again: it says
// whose file it is and as whom to run.
func TestUnreadableTokenSaysWhoseItIs(t *testing.T) {
	tests := []struct {
		name       string
		euid       int
		fileUID    int
		unreadable bool
		want       []string
	}{
		{name: "the service's file, read by another user", euid: 1000, fileUID: 999, unreadable: true,
			want: []string{"is owned by user999; run this command as user999 (e.g. sudo -u user999 calsyncd"}},
		{name: "root's file, read by the service", euid: 999, fileUID: 0, unreadable: true,
			want: []string{"owned by root", "sudo chown user999 "}},
		{name: "its own file, closed to it", euid: 999, fileUID: 999, unreadable: true,
			want: []string{"chmod 600 "}},
		{name: "no file at all", euid: 999, fileUID: 999,
			want: []string{"calsyncd auth login"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oauth := newFakeOAuth(t)
			files := map[string]string{
				"config.yaml": "state_dir: state\ngoogle:\n  credentials_file: client.json\n",
				"client.json": oauth.desktopClient(),
			}
			if tt.unreadable {
				files["state/token-default.json"] = tokenJSON("a", "r", time.Now())
			}
			cfg, _ := setup(t, files)
			machine := &googleauth.FakeOwners{EUID: tt.euid, Owner: ownedBy(map[string][2]int{"token-default.json": {tt.fileUID, 1}})}
			if tt.unreadable {
				machine.Unreadable = map[string]bool{"token-default.json": true}
			}
			_, err := googleauth.Load(context.Background(), cfg, "", googleauth.WithOwners(googleauth.Options{}, machine))
			var aerr *googleauth.Error
			if !errors.As(err, &aerr) {
				t.Fatalf("err = %v, want a *googleauth.Error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(aerr.Hint, w) {
					t.Errorf("hint %q does not say %q", aerr.Hint, w)
				}
			}
			if tt.unreadable && strings.Contains(aerr.Hint, "auth login") {
				t.Errorf("hint %q sends the person to log in again", aerr.Hint)
			}
		})
	}
}

// auth login run with sudo saves the token for the service; run as another
// user it refuses before sending anyone to Google.
func TestLoginKeepsTheTokenFileItsOwners(t *testing.T) {
	const service, group = 999, 998
	tests := []struct {
		name      string
		euid      int
		existing  os.FileMode // 0: no token file yet
		wantErr   string
		wantChown [][2]int
		wantMode  os.FileMode
	}{
		{name: "root, first login into the service's directory", euid: 0,
			wantChown: [][2]int{{service, group}}, wantMode: 0o600},
		{name: "root, a new login over the service's file", euid: 0, existing: 0o640,
			wantChown: [][2]int{{service, group}}, wantMode: 0o640},
		{name: "the service's user", euid: service, existing: 0o600, wantMode: 0o600},
		{name: "another user, the service's file", euid: 1000, existing: 0o640,
			wantErr: "run this command as user999", wantMode: 0o640},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oauth := newFakeOAuth(t)
			cfg, dir := setup(t, map[string]string{
				"config.yaml": "state_dir: state\ngoogle:\n  credentials_file: client.json\n",
				"client.json": oauth.desktopClient(),
			})
			path := filepath.Join(dir, "state", "token-default.json")
			os.MkdirAll(filepath.Dir(path), 0o700)
			if tt.existing != 0 {
				os.WriteFile(path, []byte(tokenJSON("old", "old-refresh", time.Now())), tt.existing)
				os.Chmod(path, tt.existing)
			}
			machine := &googleauth.FakeOwners{EUID: tt.euid, Owner: ownedBy(map[string][2]int{
				"token-default.json": {service, group}, "state": {service, group}})}
			b := &browser{t: t, oauth: oauth}
			opened := false
			consent := b.consent(false)
			_, err := googleauth.Login(context.Background(), cfg, "", googleauth.LoginWithOwners(googleauth.LoginOptions{
				OpenURL: func(u string) { opened = true; consent(u) }}, machine))
			if tt.wantErr != "" {
				var aerr *googleauth.Error
				if !errors.As(err, &aerr) || !strings.Contains(aerr.Hint, tt.wantErr) {
					t.Fatalf("err = %v, want a hint saying %q", err, tt.wantErr)
				}
				if opened || oauth.count() != 0 {
					t.Errorf("the browser was sent to Google (opened %v, token requests %d) before the refusal", opened, oauth.count())
				}
				if tok, err := googleauth.ReadToken(path); err != nil || tok.AccessToken != "old" {
					t.Errorf("the service's token was replaced: %v, %v", tok, err)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if tok, err := googleauth.ReadToken(path); err != nil || tok.AccessToken != "access-1" {
				t.Errorf("saved token = %v, %v", tok, err)
			}
			if got := machine.Chowned(); len(got) != len(tt.wantChown) || len(got) > 0 && got[0] != tt.wantChown[0] {
				t.Errorf("files handed to %v, want %v", got, tt.wantChown)
			}
			if m := fileMode(t, path); m != tt.wantMode {
				t.Errorf("mode = %04o, want %04o", m, tt.wantMode)
			}
		})
	}
}
