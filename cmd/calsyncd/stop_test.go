package main

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
)

// TestTheShippedUnitWaitsForADefaultStop: the unit's TimeoutStopSec is
// the one config warns against, and covers a stop on the defaults.
func TestTheShippedUnitWaitsForADefaultStop(t *testing.T) {
	unit, err := os.ReadFile("../../deploy/calsyncd.service")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^TimeoutStopSec=(\d+)$`).FindSubmatch(unit)
	if m == nil {
		t.Fatal("the unit sets no TimeoutStopSec")
	}
	secs, _ := strconv.Atoi(string(m[1]))
	if got := time.Duration(secs) * time.Second; got != config.UnitStopTimeout {
		t.Errorf("the unit's TimeoutStopSec is %s, config.UnitStopTimeout %s", got, config.UnitStopTimeout)
	}
	if b := config.Default().StopBudget(); b > config.UnitStopTimeout {
		t.Errorf("a stop on the defaults takes up to %s, past the unit's %s", b, config.UnitStopTimeout)
	}
}

// TestAStopAsksSystemdForTheTimeItTakes: at SIGTERM the daemon tells
// systemd how long its stop may take (EXTEND_TIMEOUT_USEC) — the drain,
// the grace and the alert flush — and is gone before that.
func TestAStopAsksSystemdForTheTimeItTakes(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	msgs := make(chan string, 64)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			msgs <- string(buf[:n])
		}
	}()
	t.Setenv("NOTIFY_SOCKET", sock)
	_, out, sigterm := stuckDaemon(t, "2s")
	start := time.Now()
	done := sigterm()
	exitWithin(t, done, 20*time.Second, out)
	elapsed := time.Since(start)
	var asked time.Duration
	for len(msgs) > 0 {
		m := <-msgs
		if !strings.Contains(m, "STOPPING=1") {
			continue
		}
		for _, line := range strings.Split(m, "\n") {
			if v, ok := strings.CutPrefix(line, "EXTEND_TIMEOUT_USEC="); ok {
				us, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("EXTEND_TIMEOUT_USEC=%q", v)
				}
				asked = time.Duration(us) * time.Microsecond
			}
		}
	}
	want := 2*time.Second + config.ShutdownGrace + config.AlertFlushTimeout + config.StopMargin
	if asked != want {
		t.Fatalf("the daemon asked systemd for %s at its stop, want %s\n%s", asked, want, out.String())
	}
	if elapsed >= asked {
		t.Errorf("the stop took %s, past the %s it asked for", elapsed, asked)
	}
}
