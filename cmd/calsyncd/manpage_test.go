package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTheManPageIsCurrent: docs/calsyncd.1 is what `calsyncd man` prints;
// regenerate it with `go run ./cmd/calsyncd man > docs/calsyncd.1`.
func TestTheManPageIsCurrent(t *testing.T) {
	t.Setenv(configEnv, "")
	want, err := os.ReadFile("../../docs/calsyncd.1")
	if err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, "man")
	if code != 0 {
		t.Fatalf("man: exit %d", code)
	}
	if out != string(want) {
		t.Errorf("docs/calsyncd.1 is not current: run `CALSYNCD_CONFIG= go run ./cmd/calsyncd man > docs/calsyncd.1`")
	}
	for _, name := range documented(NewMain()) {
		if !strings.Contains(out, ".SS "+strings.ReplaceAll(name, "-", `\-`)) {
			t.Errorf("the man page has no section for %s", name)
		}
	}
	if man, err := exec.LookPath("man"); err == nil {
		p := filepath.Join(t.TempDir(), "calsyncd.1")
		os.WriteFile(p, []byte(out), 0o644)
		text, err := exec.Command(man, "-l", p).CombinedOutput()
		if err != nil || !strings.Contains(string(text), "calsyncd sync --config FILE") {
			t.Errorf("man -l: %v\n%.500s", err, text)
		}
	}
}

// TestBashCompletesCommandsAndFlags runs the bash script as bash would.
func TestBashCompletesCommandsAndFlags(t *testing.T) {
	out, _, code := run(t, "completion", "bash")
	if code != 0 {
		t.Fatalf("completion bash: exit %d", code)
	}
	script := filepath.Join(t.TempDir(), "calsyncd.bash")
	os.WriteFile(script, []byte(out), 0o644)
	complete := func(words ...string) string {
		t.Helper()
		line := "source " + script + "; COMP_WORDS=(calsyncd"
		for _, w := range words {
			line += " '" + w + "'"
		}
		line += "); COMP_CWORD=" + itoa(len(words)) + "; _calsyncd; echo \"${COMPREPLY[*]}\""
		b, err := exec.Command("bash", "-c", line).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, b)
		}
		return strings.TrimSpace(string(b))
	}
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"sy"}, []string{"sync"}},
		{[]string{""}, []string{"sync", "status", "check", "run", "auth", "validate", "demo", "version"}},
		{[]string{"sync", "--dr"}, []string{"--dry-run"}},
		{[]string{"sync", "family", "--al"}, []string{"--allow-deletes"}},
		{[]string{"auth", "l"}, []string{"login"}},
		{[]string{"auth", "login", "--acc"}, []string{"--account"}},
		{[]string{"status", "--j"}, []string{"--json"}},
	} {
		got := " " + complete(tc.words...) + " "
		for _, w := range tc.want {
			if !strings.Contains(got, " "+w+" ") {
				t.Errorf("%v: %q lacks %s", tc.words, got, w)
			}
		}
	}
	if got := complete("sync", "--dr"); strings.Contains(got, "--account") {
		t.Errorf("sync offers auth's flags: %q", got)
	}
}

func TestZshCompletionNamesEveryCommandAndFlag(t *testing.T) {
	out, _, code := run(t, "completion", "zsh")
	if code != 0 || !strings.HasPrefix(out, "#compdef calsyncd") {
		t.Fatalf("completion zsh: exit %d\n%s", code, out)
	}
	for name, flags := range commandFlags(context.Background(), NewMain()) {
		for _, f := range flags {
			if !strings.Contains(out, f) {
				t.Errorf("zsh completion lacks %s of %s", f, name)
			}
		}
	}
	if zsh, err := exec.LookPath("zsh"); err == nil {
		p := filepath.Join(t.TempDir(), "_calsyncd")
		os.WriteFile(p, []byte(out), 0o644)
		if b, err := exec.Command(zsh, "-n", p).CombinedOutput(); err != nil {
			t.Errorf("zsh -n: %v\n%s", err, b)
		}
	}
	if _, _, code := run(t, "completion", "fish"); code != 2 {
		t.Errorf("completion fish: exit %d, want 2", code)
	}
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+n))) }
