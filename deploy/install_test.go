package deploy_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// envInstall turns on the install test; .ci/run sets it. The test needs
// root and, for its duration, the system user calsyncd on this host.
const envInstall = "CALSYNCD_TEST_INSTALL"

// The README's "Under systemd" section: its table of paths, owners and
// modes, and its first sh block, the install steps.
func readmeInstall(t *testing.T) (steps []string, table [][3]string) {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n### Under systemd\n")
	if i < 0 {
		t.Fatal(`README has no "### Under systemd" section`)
	}
	s = s[i+1:]
	if j := strings.Index(s, "\n## "); j >= 0 {
		s = s[:j]
	}
	m := regexp.MustCompile("(?s)```sh\n(.*?)\n```").FindStringSubmatch(s)
	if m == nil {
		t.Fatal("the Under systemd section has no sh block")
	}
	steps = strings.Split(m[1], "\n")
	row := regexp.MustCompile("(?m)^\\| `(/[^`]+)` \\| ([a-z]+:[a-z]+) \\| (0[0-7]{3}) \\|")
	for _, r := range row.FindAllStringSubmatch(s, -1) {
		table = append(table, [3]string{r[1], r[2], r[3]})
	}
	if len(table) == 0 {
		t.Fatal("the Under systemd section has no table of paths, owners and modes")
	}
	return steps, table
}

// host is the machine the README installs on, moved into a temporary root:
// every absolute path under /etc, /var and /usr in the steps and the unit
// is taken to the same path under root.
type host struct {
	root string // the stand-in for /
	work string // the directory the steps run in
}

var hostPath = regexp.MustCompile(`(^|[\s=])/(etc|var|usr)/`)

func (h *host) path(s string) string { return hostPath.ReplaceAllString(s, "${1}"+h.root+"/${2}/") }

func newHost(t *testing.T) *host {
	t.Helper()
	// Not t.TempDir: its directories are 0700, and the service's user must
	// be able to walk down to its files as it would on a real host.
	root, err := os.MkdirTemp("", "calsyncd-root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	h := &host{root: root, work: t.TempDir()}
	// The directories a stock Debian system has, and nothing more.
	for _, d := range []string{"", "etc", "etc/systemd/system", "usr/local/bin", "var/lib", "run"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Join(root, d), 0o755)
	}
	return h
}

// lockHost keeps two runs of the test on one machine from sharing (and
// deleting) the calsyncd user under each other.
func lockHost(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "calsyncd-install-test.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
}

// forgetUserAfter removes the user and its group after the test, if the
// test is what created them.
func forgetUserAfter(t *testing.T, name string) {
	t.Helper()
	if _, err := user.Lookup(name); err == nil {
		t.Logf("user %s exists already; the test uses it and leaves it", name)
		return
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v\n%s", name, err, out)
		}
		if _, err := user.LookupGroup(name); err == nil {
			if out, err := exec.Command("groupdel", name).CombinedOutput(); err != nil {
				t.Errorf("groupdel %s: %v\n%s", name, err, out)
			}
		}
	})
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// writeInputs puts in the work directory what the README's steps expect
// there: the built calsyncd, config.yaml, environment, credentials.json and
// the repository's deploy/.
func (h *host) writeInputs(t *testing.T, g *google, feedURL, listen string) {
	t.Helper()
	build := exec.Command("go", "build", "-o", filepath.Join(h.work, "calsyncd"), "./cmd/calsyncd")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	files := map[string]string{
		// The operator's config, as the README's table describes it.
		"config.yaml": fmt.Sprintf(`state_dir: %s
listen: %s
status:
  token: ${CALSYNCD_STATUS_TOKEN}
log:
  format: json
google:
  credentials_file: %s
  endpoint: %s/calendar/v3/
writer:
  spacing: 1ms
subscriptions:
  - id: team
    url: %s/team.ics
    calendar: team@example.com
    headers:
      Authorization: Bearer ${FEED_TOKEN}
`, h.path("/var/lib/calsyncd"), listen, h.path("/etc/calsyncd/credentials.json"), g.api.URL, feedURL),
		"environment":      "# secrets for the config's ${VAR}s\nFEED_TOKEN=" + feedSecret + "\nCALSYNCD_STATUS_TOKEN=" + statusSecret + "\n",
		"credentials.json": g.desktopClient(),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(h.work, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(h.work, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"calsyncd.service", "calsyncd.sysusers"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h.work, "deploy", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runSteps runs the README's steps in order, as root, in the work
// directory. The login is answered as Google and a browser would; the
// closing systemctl line is left to startAsUnit (there is no systemd here
// to run it), and nothing may follow it.
func (h *host) runSteps(t *testing.T, steps []string) {
	t.Helper()
	env := []string{"PATH=" + h.root + "/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8"}
	for i, step := range steps {
		if strings.HasPrefix(step, "systemctl ") {
			if i != len(steps)-1 {
				t.Fatalf("README install steps: %q is followed by steps the test would not run", step)
			}
			return
		}
		cmd := exec.Command("sh", "-c", h.path(step))
		cmd.Dir, cmd.Env = h.work, env
		if !strings.Contains(step, " auth login ") {
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("README install step %q: %v\n%s", step, err, out)
			}
			continue
		}
		pr, pw := io.Pipe()
		cmd.Stdout, cmd.Stderr = pw, pw
		printed := playBrowser(pr)
		err := cmd.Run()
		pw.Close()
		if out := <-printed; err != nil || !strings.Contains(out, "Saved the token") {
			t.Fatalf("README install step %q: %v\n%s", step, err, out)
		}
	}
	t.Fatal("README install steps do not end with systemctl enable")
}

// checkTable checks every path in the README's table has its owner and
// mode.
func (h *host) checkTable(t *testing.T, table [][3]string) {
	t.Helper()
	for _, row := range table {
		path, owner, mode := h.path(row[0]), row[1], row[2]
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("README table: %v", err)
			continue
		}
		st := fi.Sys().(*syscall.Stat_t)
		u, _ := user.LookupId(strconv.Itoa(int(st.Uid)))
		g, _ := user.LookupGroupId(strconv.Itoa(int(st.Gid)))
		if u == nil || g == nil || u.Username+":"+g.Name != owner || fmt.Sprintf("%04o", fi.Mode().Perm()) != mode {
			t.Errorf("%s: %v %04o, the README says %s %s", row[0], st, fi.Mode().Perm(), owner, mode)
		}
	}
}

// ownedBy checks a file the service wrote belongs to its user, mode 0600.
func ownedBy(t *testing.T, path string, u *user.User) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Error(err)
		return
	}
	st := fi.Sys().(*syscall.Stat_t)
	if strconv.Itoa(int(st.Uid)) != u.Uid || strconv.Itoa(int(st.Gid)) != u.Gid || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: uid %d gid %d mode %04o, want %s's own, 0600", path, st.Uid, st.Gid, fi.Mode().Perm(), u.Username)
	}
}

// TestInstallAsTheReadmeSays follows the README's install steps to the
// letter in a temporary root (the sysusers file creates the user on this
// host), logs in as the service's user, then starts the installed binary
// as the unit starts it — its user, group, umask, capabilities and
// environment, notify socket included — and checks that it reads its
// config and secrets, writes its state, and syncs a feed.
func TestInstallAsTheReadmeSays(t *testing.T) {
	if os.Getenv(envInstall) == "" {
		t.Skipf("set %s=1 to install as the README says (needs root; creates the system user calsyncd for the test; .ci/run sets it)", envInstall)
	}
	if os.Geteuid() != 0 {
		t.Fatalf("%s is set: the install test needs root", envInstall)
	}
	for _, tool := range []string{"systemd-sysusers", "systemd-analyze", "runuser", "setpriv", "install", "userdel", "groupdel"} {
		requireTool(t, tool, envInstall)
	}
	lockHost(t)
	steps, table := readmeInstall(t)
	h := newHost(t)
	g := newGoogle(t)
	feeds := feedServer(t)
	listen := freeAddr(t)
	h.writeInputs(t, g, feeds.URL, listen)
	forgetUserAfter(t, "calsyncd")

	h.runSteps(t, steps)
	h.checkTable(t, table)
	svc, err := user.Lookup("calsyncd")
	if err != nil {
		t.Fatalf("after the README's steps: %v", err)
	}
	ownedBy(t, h.path("/var/lib/calsyncd/token-default.json"), svc)

	unit := parseUnit(t, h.path("/etc/systemd/system/calsyncd.service"))
	verifyUnit(t, h.mappedUnit(t))
	d := h.startAsUnit(t, unit)
	d.waitFor(t, "READY=1")
	d.syncNow(t, listen)
	d.checkMetrics(t, listen)
	d.stop(t)

	ownedBy(t, h.path("/var/lib/calsyncd/calsyncd.db"), svc)
	if n := len(g.fake.Events("team@example.com")); n != 3 {
		t.Errorf("the calendar holds %d events, want the feed's 3", n)
	}
	for _, ev := range g.fake.Events("team@example.com") {
		if sub, _, ok := gcalwriter.Marks(ev); !ok || sub != "team" {
			t.Errorf("event %s lacks calsyncd's mark", ev.Id)
		}
	}
	for _, secret := range []string{feedSecret, statusSecret, refreshSecret, "access-secret-"} {
		if strings.Contains(d.log.String(), secret) {
			t.Errorf("the service's log shows a secret (%s…)", secret[:8])
		}
	}
}

// mappedUnit is the installed unit with its paths moved into the root, for
// `systemd-analyze verify`, which checks that ExecStart's binary exists.
func (h *host) mappedUnit(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(h.path("/etc/systemd/system/calsyncd.service"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "calsyncd.service")
	if err := os.WriteFile(p, []byte(h.path(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
