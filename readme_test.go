package calsyncd_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeCommand returns the one-line command of the first sh block under the
// README heading, and the line it is on.
func readmeCommand(t *testing.T, readme, heading string) (string, int) {
	t.Helper()
	i := strings.Index(readme, "\n## "+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no %q section", heading)
	}
	m := regexp.MustCompile("(?s)```sh\n(.*?)\n```").FindStringSubmatchIndex(readme[i:])
	if m == nil {
		t.Fatalf("README section %q has no sh block", heading)
	}
	cmd := strings.TrimSpace(readme[i+m[2] : i+m[3]])
	if strings.Contains(cmd, "\n") {
		t.Fatalf("README section %q: want a one-line command, got %q", heading, cmd)
	}
	return cmd, strings.Count(readme[:i+m[2]], "\n") + 1
}

// TestReadmeCommands runs the README's two newcomer commands as written: the
// demo (stopped with Ctrl-C once its story is told) and the test command
// (the whole suite once more, without this test). It runs when
// CALSYNCD_README_TEST is set, as .ci/run does.
func TestReadmeCommands(t *testing.T) {
	if os.Getenv("CALSYNCD_README_INNER") != "" {
		t.Skip("this run is the README test command itself")
	}
	if os.Getenv("CALSYNCD_README_TEST") == "" {
		t.Skip("set CALSYNCD_README_TEST=1 to run the README's commands (.ci/run does); it runs the whole suite a second time")
	}
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	demo, demoLine := readmeCommand(t, readme, "Try it (no Google account needed)")
	tests, testsLine := readmeCommand(t, readme, "Run the tests")
	if demoLine > 40 || testsLine > 40 {
		t.Errorf("the two commands must be on the README's first screen (lines %d and %d)", demoLine, testsLine)
	}

	t.Run("demo", func(t *testing.T) {
		cmd := exec.Command("sh", "-c", demo)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		told := make(chan bool, 1)
		var log strings.Builder
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				log.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), "demo: the story is told") {
					told <- true
				}
			}
			close(told)
		}()
		select {
		case ok := <-told:
			if !ok {
				cmd.Wait()
				t.Fatalf("%s ended before telling its story:\n%s", demo, log.String())
			}
		case <-time.After(5 * time.Minute):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("%s did not tell its story within 5 minutes", demo)
		}
		// The newcomer presses Ctrl-C.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			// go run itself may die of the interrupt; the demo under it
			// must stop cleanly.
			var exit *exec.ExitError
			if err != nil && !(errors.As(err, &exit) && exit.ProcessState.Sys().(syscall.WaitStatus).Signal() == syscall.SIGINT) {
				t.Fatalf("%s after Ctrl-C: %v", demo, err)
			}
			<-told // the log is read to its end
			if !strings.Contains(log.String(), "scheduler stopped") {
				t.Fatalf("the demo did not stop cleanly on Ctrl-C:\n%s", log.String())
			}
		case <-time.After(time.Minute):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("%s did not stop on Ctrl-C", demo)
		}
	})

	t.Run("tests", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", tests)
		cmd.Env = append(os.Environ(), "CALSYNCD_README_INNER=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", tests, err, out)
		}
	})
}
