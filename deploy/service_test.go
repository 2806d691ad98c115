package deploy_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// service is the daemon started as the unit would start it.
type service struct {
	cmd    *exec.Cmd
	log    *syncBuffer
	notify *notifySocket
	exited chan error
}

// startAsUnit runs ExecStart as User=/Group= with the unit's UMask=,
// NoNewPrivileges= and (empty) capability sets, in the environment systemd
// gives a service: a fixed PATH, the user's identity, STATE_DIRECTORY,
// NOTIFY_SOCKET and the variables of EnvironmentFile=. The unit's other
// sandboxing (ProtectSystem= and friends) needs systemd itself and is only
// checked by systemd-analyze.
func (h *host) startAsUnit(t *testing.T, u unitFile) *service {
	t.Helper()
	name, group := u.one(t, "Service", "User"), u.one(t, "Service", "Group")
	acct, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if vs := u["Service"]["Environment"]; len(vs) > 0 {
		t.Fatalf("the unit sets Environment=%q; teach this test to pass it", vs)
	}
	if u.one(t, "Service", "NoNewPrivileges") != "yes" || u.one(t, "Service", "CapabilityBoundingSet") != "" ||
		u.one(t, "Service", "AmbientCapabilities") != "" {
		t.Fatal("the unit's privileges changed; teach this test to apply them")
	}
	envFile := h.path(strings.TrimPrefix(u.one(t, "Service", "EnvironmentFile"), "-"))
	n := newNotifySocket(t, filepath.Join(h.root, "run", "notify.sock"))
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "LANG=C.UTF-8",
		"USER=" + name, "LOGNAME=" + name, "HOME=" + acct.HomeDir, "SHELL=/usr/sbin/nologin",
		"STATE_DIRECTORY=" + h.path("/var/lib/"+u.one(t, "Service", "StateDirectory")), "NOTIFY_SOCKET=" + n.path}
	env = append(env, readEnvironmentFile(t, envFile)...)
	args := []string{"--reuid=" + name, "--regid=" + group, "--init-groups", "--no-new-privs",
		"--bounding-set=-all", "--inh-caps=-all", "--", "/bin/sh", "-c", `umask "$0" && exec "$@"`, u.one(t, "Service", "UMask")}
	args = append(args, strings.Fields(h.path(u.one(t, "Service", "ExecStart")))...)
	s := &service{cmd: exec.Command("setpriv", args...), log: &syncBuffer{}, notify: n, exited: make(chan error, 1)}
	s.cmd.Env, s.cmd.Dir, s.cmd.Stdout, s.cmd.Stderr = env, "/", s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exited <- s.cmd.Wait() }()
	t.Cleanup(func() { s.cmd.Process.Kill() })
	return s
}

// readEnvironmentFile reads NAME=value lines as systemd does for the
// simple lines the test writes; anything fancier fails the test rather
// than being misread.
func readEnvironmentFile(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("EnvironmentFile: %v", err)
	}
	var env []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=[^"'\\$ ]*$`).MatchString(line) {
			t.Fatalf("EnvironmentFile line %q: this test reads only NAME=value", line)
		}
		env = append(env, line)
	}
	return env
}

// waitFor waits for a message on the notify socket; the service dying
// first is a failure.
func (s *service) waitFor(t *testing.T, msg string) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case m, ok := <-s.notify.msgs:
			if !ok {
				t.Fatalf("notify socket closed before %s", msg)
			}
			if strings.Contains("\n"+m+"\n", "\n"+msg+"\n") {
				return
			}
		case err := <-s.exited:
			t.Fatalf("the service exited (%v) before sending %s:\n%s", err, msg, s.log.String())
		case <-timeout:
			t.Fatalf("no %s from the service within a minute:\n%s", msg, s.log.String())
		}
	}
}

// syncNow asks the running service to sync the subscription, through its
// status endpoint and the token from the environment file, and waits for
// the run to finish ok.
func (s *service) syncNow(t *testing.T, listen string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	call := func(method, path string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, method, "http://"+listen+path, nil)
		req.Header.Set("Authorization", "Bearer "+statusSecret)
		return http.DefaultClient.Do(req)
	}
	resp, err := call(http.MethodPost, "/subscriptions/team/sync")
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /subscriptions/team/sync: %v %v\n%s", err, resp, s.log.String())
	}
	resp.Body.Close()
	for {
		resp, err := call(http.MethodGet, "/status")
		if err != nil {
			t.Fatalf("GET /status: %v\n%s", err, s.log.String())
		}
		var st struct {
			Subscriptions []struct {
				LastRun *struct {
					Outcome    string     `json:"outcome"`
					FinishedAt *time.Time `json:"finished_at"`
				} `json:"last_run"`
			} `json:"subscriptions"`
		}
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil || len(st.Subscriptions) != 1 {
			t.Fatalf("GET /status: %v %+v", err, st)
		}
		if lr := st.Subscriptions[0].LastRun; lr != nil && lr.FinishedAt != nil {
			if lr.Outcome != "ok" {
				t.Fatalf("the run ended %s:\n%s", lr.Outcome, s.log.String())
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the run did not finish within a minute:\n%s", s.log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM, as systemctl stop does, and wants a clean exit.
func (s *service) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		if err != nil {
			t.Fatalf("the service exited with %v on SIGTERM:\n%s", err, s.log.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("the service did not stop on SIGTERM:\n%s", s.log.String())
	}
}

// checkMetrics scrapes the service as Prometheus would and looks for the
// gauges the alerting rules read.
func (s *service) checkMetrics(t *testing.T, listen string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+listen+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+statusSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`calsyncd_subscription_state{state="ERROR",subscription="team"} 0`,
		`calsyncd_held_deletes{subscription="team"} 0`,
		`calsyncd_last_success_timestamp_seconds{subscription="team"} `,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
