package calsyncd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeBlocks returns the fenced blocks of the given language under the
// README heading (up to the next heading of the same level).
func readmeBlocks(t *testing.T, readme, heading, lang string) []string {
	t.Helper()
	i := strings.Index(readme, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no %q heading", heading)
	}
	section := readme[i+len(heading)+2:]
	level := heading[:strings.IndexByte(heading, ' ')+1]
	if j := strings.Index(section, "\n"+level); j >= 0 {
		section = section[:j]
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)\n```").FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		t.Fatalf("README section %q has no %s block", heading, lang)
	}
	return out
}

// buildCalsyncd builds the program into a temporary directory and returns
// that directory, to put first on PATH.
func buildCalsyncd(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "calsyncd"), "./cmd/calsyncd")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// TestReadmeValidatesTheExample runs the README's validate command line on
// config.example.yaml exactly as written, without the secret the example
// names, and checks that it prints what the README shows and exits 0.
func TestReadmeValidatesTheExample(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	line := readmeBlocks(t, readme, "## Configuration", "sh")[0]
	want := readmeBlocks(t, readme, "## Configuration", "text")[0] + "\n"
	if strings.Contains(line, "\n") || !strings.HasPrefix(line, "calsyncd validate ") || !strings.Contains(line, "config.example.yaml") {
		t.Fatalf("the Configuration section's first sh block should be the one validate line, got %q", line)
	}
	bin := buildCalsyncd(t)
	cmd := exec.Command("sh", "-c", line)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TEAM_FEED_TOKEN=") && !strings.HasPrefix(kv, "PATH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	if string(out) != want {
		t.Errorf("%s printed:\n%s\nthe README says:\n%s", line, out, want)
	}
}
