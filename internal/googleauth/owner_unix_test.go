//go:build unix

package googleauth_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/googleauth"
)

func fileOwner(t *testing.T, fi os.FileInfo) (uid, gid int) {
	t.Helper()
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Fatalf("no owner for %s", fi.Name())
	}
	return int(st.Uid), int(st.Gid)
}

// readAs reads path as the user uid (and group uid), in a child process.
func readAs(t *testing.T, uid int, path string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command("cat", path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	return cmd.Output()
}

// The real thing, as root (as CI runs): the service's file keeps its owner,
// group and mode after a refresh, and the service's user can read it.
func TestRootRefreshKeepsOwnerAndMode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to hand a file to another user; TestRefreshKeepsTheTokenFileItsOwners covers the logic")
	}
	const nobody = 65534
	for _, mode := range []os.FileMode{0o600, 0o640} {
		t.Run(mode.String(), func(t *testing.T) {
			oauth := newFakeOAuth(t)
			cfg, dir := setup(t, map[string]string{
				"config.yaml":              "state_dir: state\ngoogle:\n  credentials_file: client.json\n",
				"client.json":              oauth.desktopClient(),
				"state/token-default.json": tokenJSON("stale-access", "refresh-0", time.Now().Add(-time.Hour)),
			})
			state := filepath.Join(dir, "state")
			path := filepath.Join(state, "token-default.json")
			for _, p := range []string{state, path} {
				if err := os.Chown(p, nobody, nobody); err != nil {
					t.Fatal(err)
				}
			}
			os.Chmod(path, mode)
			// The service's user must get to its state directory.
			for d := dir; d != os.TempDir() && d != filepath.Dir(d); d = filepath.Dir(d) {
				os.Chmod(d, 0o711)
			}

			creds, err := googleauth.Load(context.Background(), cfg, "", googleauth.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tok, err := creds.TokenSource.Token(); err != nil || tok.AccessToken != "access-1" {
				t.Fatalf("Token = %v, %v", tok, err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if uid, gid := fileOwner(t, fi); uid != nobody || gid != nobody || fi.Mode().Perm() != mode {
				t.Errorf("after a refresh as root: owner %d:%d mode %04o, want %d:%d %04o", uid, gid, fi.Mode().Perm(), nobody, nobody, mode)
			}
			data, err := readAs(t, nobody, path)
			if err != nil {
				t.Fatalf("the service's user cannot read its token: %v", err)
			}
			if !strings.Contains(string(data), `"access-1"`) {
				t.Errorf("the service's user reads a token without the refreshed access token")
			}
		})
	}
}
