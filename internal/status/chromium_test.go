package status_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestStatusPageRendersInChromium loads the page in headless Chromium
// (Debian's chromium package; .ci/run installs it and sets
// CALSYNCD_REQUIRE_CHROMIUM so CI cannot skip this) and checks the browser
// built the table and the charts under the page's Content-Security-Policy
// (no violation reported), and drew a non-empty screenshot.
func TestStatusPageRendersInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CALSYNCD_REQUIRE_CHROMIUM") != "" {
			t.Fatal("chromium is required (CALSYNCD_REQUIRE_CHROMIUM is set) but not installed: apt-get install chromium")
		}
		t.Skip("chromium not installed (apt-get install chromium); .ci/run installs it")
	}
	ts, _ := server(t, &fakeDaemon{running: true}, "")
	dir := t.TempDir()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir=" + dir}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// With logging on, Chromium reports every Content-Security-Policy
	// violation on stderr: the page must render under its policy as served.
	var console strings.Builder
	cmd := exec.CommandContext(ctx, bin, append(flags, "--enable-logging=stderr", "--v=0", "--dump-dom", ts.URL+"/")...)
	cmd.Stderr = &console
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	if strings.Contains(console.String(), "Content Security Policy") {
		t.Errorf("the page violates its Content-Security-Policy:\n%s", console.String())
	}
	page := string(dom)
	for _, want := range []string{`<table id="subscriptions">`, `id="sub-team"`, `id="sub-holidays"`, "<svg", `class="w"`, `class="d"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the DOM Chromium built lacks %q", want)
		}
	}
	shot := dir + "/status.png"
	if out, err := exec.CommandContext(ctx, bin, append(flags, "--window-size=1280,720", "--screenshot="+shot, ts.URL+"/")...).CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	img, err := os.ReadFile(shot)
	if err != nil || len(img) < 5000 || !strings.HasPrefix(string(img), "\x89PNG") {
		t.Fatalf("screenshot: %d bytes, %v", len(img), err)
	}
	if os.Getenv("CALSYNCD_KEEP_SCREENSHOT") != "" {
		os.WriteFile(os.Getenv("CALSYNCD_KEEP_SCREENSHOT"), img, 0o644)
	}
}
