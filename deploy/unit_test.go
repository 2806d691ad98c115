package deploy_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// maxExposure is the unit's `systemd-analyze security` exposure, which may
// only go down (it was 1.6 with DynamicUser; 1.5 now).
const maxExposure = 1.5

// unitFile is a unit's settings: section → key → values in file order.
type unitFile map[string]map[string][]string

func parseUnit(t *testing.T, path string) unitFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unitFile{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		case strings.HasSuffix(line, "\\"):
			t.Fatalf("%s:%d: continued lines are not handled by this test", path, n)
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not a setting: %q", path, n, line)
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			u[section][k] = append(u[section][k], v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return u
}

// one is the single value of a setting, failing when it is absent or
// repeated.
func (u unitFile) one(t *testing.T, section, key string) string {
	t.Helper()
	vs := u[section][key]
	if len(vs) != 1 {
		t.Fatalf("unit: want exactly one %s= in [%s], got %q", key, section, vs)
	}
	return vs[0]
}

// requireTool finds a program, skipping the test when it is missing unless
// the environment variable says it must be there (then the test fails).
func requireTool(t *testing.T, name, requiredBy string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv(requiredBy) != "" {
		t.Fatalf("%s is required (%s is set) but not installed: %v", name, requiredBy, err)
	}
	t.Skipf("%s is not installed (set %s=1 to make this a failure; .ci/run does)", name, requiredBy)
	return ""
}

var exposureLine = regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`)

// TestUnitSecurityExposure keeps the unit's hardening from slipping:
// systemd's own assessment, offline, must not rise above maxExposure.
func TestUnitSecurityExposure(t *testing.T) {
	bin := requireTool(t, "systemd-analyze", "CALSYNCD_TEST_INSTALL")
	out, err := exec.Command(bin, "security", "--offline=true", "--no-pager", "calsyncd.service").CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	m := exposureLine.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no overall exposure in:\n%s", out)
	}
	got, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	if got > maxExposure {
		t.Errorf("exposure %.1f, want at most %.1f:\n%s", got, maxExposure, out)
	}
}

// TestUnitMatchesSysusers checks the unit runs as the user the sysusers
// file creates, whose home is the unit's state directory.
func TestUnitMatchesSysusers(t *testing.T) {
	u := parseUnit(t, "calsyncd.service")
	b, err := os.ReadFile("calsyncd.sysusers")
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && line[0] != '#' {
			if fields != nil {
				t.Fatalf("calsyncd.sysusers: want one line, got another: %q", line)
			}
			fields = regexp.MustCompile(`"[^"]*"|\S+`).FindAllString(line, -1)
		}
	}
	if len(fields) != 5 || fields[0] != "u" {
		t.Fatalf("calsyncd.sysusers: want `u NAME ID GECOS HOME`, got %q", fields)
	}
	name, home := fields[1], fields[4]
	if got := u.one(t, "Service", "User"); got != name {
		t.Errorf("User=%s, the sysusers file creates %s", got, name)
	}
	if got := u.one(t, "Service", "Group"); got != name {
		t.Errorf("Group=%s, the sysusers file creates the group %s", got, name)
	}
	if got := filepath.Join("/var/lib", u.one(t, "Service", "StateDirectory")); got != home {
		t.Errorf("StateDirectory is %s, the user's home %s", got, home)
	}
	if _, ok := u["Service"]["DynamicUser"]; ok {
		t.Errorf("DynamicUser= and a static user do not mix")
	}
}

// verifyUnit runs `systemd-analyze verify` on a unit whose paths exist; it
// passes with warnings, so any output at all is a failure.
func verifyUnit(t *testing.T, path string) {
	t.Helper()
	bin := requireTool(t, "systemd-analyze", "CALSYNCD_TEST_INSTALL")
	out, err := exec.Command(bin, "verify", "--no-pager", path).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", path, err, out)
	}
}
