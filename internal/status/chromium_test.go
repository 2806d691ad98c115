package status_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/store"
)

// hostileTitle is a feed's event title that tries to run a script.
const hostileTitle = `<script>alert(1)</script><img src=x onerror=alert(2)>Board meeting`

// dashboard is the fixture as an operator meets it: holidays failed three
// times (404), team's last run wrote, deferred and kept what it wrote.
func dashboard(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	for i := range 3 {
		at := t0.Add(time.Duration(i-3) * 20 * time.Minute)
		id, err := st.StartRun(ctx, "holidays", at)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.FinishRun(ctx, calsyncd.Run{ID: id, FinishedAt: at.Add(2 * time.Second), Outcome: calsyncd.OutcomeFailed,
			ErrorClass: calsyncd.ClassFeedRejected, Error: "feed: the feed is not there (404 Not Found) — check the URL"}); err != nil {
			t.Fatal(err)
		}
	}
	hol, _ := st.Subscription(ctx, "holidays")
	hol.LastError = "feed: the feed is not there (404 Not Found) — check the URL"
	if err := st.SaveSubscription(ctx, hol); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(-5 * time.Minute)
	id, err := st.StartRun(ctx, "team", at)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, calsyncd.Run{ID: id, FinishedAt: at.Add(40 * time.Second), Outcome: calsyncd.OutcomeDeferred,
		Created: 2, Updated: 1, Deleted: 1, Deferred: 7, Unchanged: 90}); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 3, 9, 30, 0, 0, time.UTC)
	if err := st.AddRunChanges(ctx, "team", id, []calsyncd.RunChange{
		{Kind: calsyncd.RunDeleted, Key: calsyncd.Key{UID: "retro-2026-11@example.com"}},
		{Kind: calsyncd.RunCreated, Key: calsyncd.Key{UID: "board"}, Title: hostileTitle, Start: start},
		{Kind: calsyncd.RunCreated, Key: calsyncd.Key{UID: "offsite"}, Title: "Team offsite", Start: time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC), AllDay: true},
		{Kind: calsyncd.RunUpdated, Key: calsyncd.Key{UID: "standup"}, Title: "Stand-up (room 4)", Start: start.Add(24 * time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
}

// probe is what the page looks like to a person, measured in the browser.
type probe struct {
	ViewportWidth  float64  `json:"viewport"`
	ScrollWidth    float64  `json:"scroll"`
	Overflowing    []string `json:"overflowing"`
	FailedBars     int      `json:"failedBars"`
	FailedBarFill  string   `json:"failedBarFill"`
	FailedBarH     float64  `json:"failedBarH"`
	TeamBars       int      `json:"teamBars"`
	ProblemText    string   `json:"problemText"`
	ProblemVisible bool     `json:"problemVisible"`
	PendingText    string   `json:"pendingText"`
	ChangesText    string   `json:"changesText"`
	Scripts        int      `json:"scripts"`
	Images         int      `json:"images"`
	OpenRun        string   `json:"openRun"`
}

// probeScript measures the page and writes the figures into it, for
// --dump-dom to carry out.
const probeScript = `<script>
(function () {
  var p = {}, d = document.documentElement, vw = window.innerWidth;
  p.viewport = vw; p.scroll = d.scrollWidth;
  p.overflowing = [];
  document.querySelectorAll('body *').forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > vw + 0.5 && p.overflowing.length < 10) p.overflowing.push(e.tagName + '.' + e.className + ' ' + Math.round(r.right));
  });
  var bars = document.querySelectorAll('#sub-holidays g.run.failed rect.x');
  p.failedBars = bars.length;
  if (bars.length) { p.failedBarFill = getComputedStyle(bars[0]).fill; p.failedBarH = bars[0].getBoundingClientRect().height; }
  p.teamBars = document.querySelectorAll('#sub-team g.run').length;
  var pr = document.getElementById('problem-holidays');
  if (pr) {
    var r = pr.getBoundingClientRect(), cs = getComputedStyle(pr);
    p.problemText = pr.innerText;
    p.problemVisible = r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= vw + 0.5 && cs.visibility === 'visible' && cs.display !== 'none';
  }
  var pe = document.getElementById('pending-team'); if (pe) p.pendingText = pe.innerText;
  var ch = document.querySelector('#runs details[open] ul.changes'); if (ch) p.changesText = ch.innerText;
  var open = document.querySelector('#runs details[open]'); if (open) p.openRun = open.parentElement.id;
  p.scripts = document.scripts.length; p.images = document.images.length;
  var out = document.createElement('pre'); out.id = 'probe'; out.textContent = JSON.stringify(p);
  document.body.appendChild(out);
})();
</script>`

// TestStatusPageRendersInChromium loads the pages in headless Chromium
// (Debian's chromium package; .ci/run installs it and sets
// CALSYNCD_REQUIRE_CHROMIUM so CI cannot skip this): they render under
// their Content-Security-Policy, and what a person sees is measured, on a
// phone (390 px) and a desktop: every run has a bar, the failed runs' red,
// the error's detail and remedy are on screen, nothing needs sideways
// scrolling, a subscription's page lists what its last run wrote, and a
// hostile title is text. The screenshots are kept in the directory the
// test logs (CALSYNCD_SCREENSHOT_DIR, or one under the temporary
// directory), for a person to judge.
func TestStatusPageRendersInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CALSYNCD_REQUIRE_CHROMIUM") != "" {
			t.Fatal("chromium is required (CALSYNCD_REQUIRE_CHROMIUM is set) but not installed: apt-get install chromium")
		}
		t.Skip("chromium not installed (apt-get install chromium); .ci/run installs it")
	}
	ts, st := server(t, &fakeDaemon{running: true}, "")
	dashboard(t, st)
	shots := os.Getenv("CALSYNCD_SCREENSHOT_DIR")
	if shots == "" {
		shots = filepath.Join(os.TempDir(), "calsyncd-status-screenshots")
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	profile := t.TempDir()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--hide-scrollbars",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir=" + profile}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	// With logging on, Chromium reports every Content-Security-Policy
	// violation on stderr: the pages must render under their policy as
	// served.
	for _, path := range []string{"/", "/subscriptions/team"} {
		var console strings.Builder
		cmd := exec.CommandContext(ctx, bin, append(flags, "--enable-logging=stderr", "--v=0", "--dump-dom", ts.URL+path)...)
		cmd.Stderr = &console
		dom, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium --dump-dom %s: %v", path, err)
		}
		if strings.Contains(console.String(), "Content Security Policy") {
			t.Errorf("%s violates its Content-Security-Policy:\n%s", path, console.String())
		}
		if !strings.Contains(string(dom), `class="chart"`) {
			t.Errorf("the DOM Chromium built of %s has no chart", path)
		}
	}

	// The measurements need a script, which the policy forbids: the same
	// HTML is served again, without the policy, with the probe appended.
	probed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(ts.URL + r.URL.Path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(strings.Replace(string(b), "</body>", probeScript+"</body>", 1)))
	}))
	defer probed.Close()
	measure := func(path string, width, height int) probe {
		t.Helper()
		size := "--window-size=" + itoa(width) + "," + itoa(height)
		dom, err := exec.CommandContext(ctx, bin, append(flags, size, "--dump-dom", probed.URL+path)...).Output()
		if err != nil {
			t.Fatalf("chromium --dump-dom %s: %v", path, err)
		}
		m := regexp.MustCompile(`<pre id="probe">(.*?)</pre>`).FindSubmatch(dom)
		if m == nil {
			t.Fatalf("%s at %dpx: the probe did not run:\n%s", path, width, dom)
		}
		var p probe
		if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &p); err != nil {
			t.Fatal(err)
		}
		shot := filepath.Join(shots, strings.Trim(strings.ReplaceAll(path, "/", "-"), "-")+"-"+itoa(width)+".png")
		if path == "/" {
			shot = filepath.Join(shots, "status-"+itoa(width)+".png")
		}
		if out, err := exec.CommandContext(ctx, bin, append(flags, size, "--screenshot="+shot, ts.URL+path)...).CombinedOutput(); err != nil {
			t.Fatalf("chromium --screenshot: %v\n%s", err, out)
		}
		if img, err := os.ReadFile(shot); err != nil || len(img) < 5000 || !strings.HasPrefix(string(img), "\x89PNG") {
			t.Fatalf("screenshot %s: %d bytes, %v", shot, len(img), err)
		}
		t.Logf("screenshot of %s at %dx%d: %s", path, width, height, shot)
		return p
	}

	for _, tt := range []struct {
		name          string
		path          string
		width, height int
	}{
		{"phone", "/", 390, 2200},
		{"desktop", "/", 1280, 1100},
		{"subscription on a phone", "/subscriptions/team", 390, 2000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := measure(tt.path, tt.width, tt.height)
			if p.ScrollWidth > p.ViewportWidth {
				t.Errorf("the page is %.0f px wide in a %.0f px viewport (sideways scrolling); too wide: %v", p.ScrollWidth, p.ViewportWidth, p.Overflowing)
			}
			if tt.path == "/" {
				// Three failed runs of holidays: three red bars, full height.
				if p.FailedBars != 3 || p.FailedBarFill != "rgb(198, 40, 40)" || p.FailedBarH < 10 {
					t.Errorf("holidays' failed runs: %d bars, fill %q, %.1f px high; want 3 red (rgb(198, 40, 40)) bars", p.FailedBars, p.FailedBarFill, p.FailedBarH)
				}
				// Team's four runs, the last deferred: four bars and the
				// deferred work pending.
				if p.TeamBars != 4 {
					t.Errorf("team's chart has %d bars, want 4", p.TeamBars)
				}
				if !p.ProblemVisible || !strings.Contains(p.ProblemText, "404 Not Found") || !strings.Contains(p.ProblemText, "What to do") {
					t.Errorf("holidays' error (visible %v): %q; want the 404 and what to do on screen", p.ProblemVisible, p.ProblemText)
				}
				if !strings.Contains(p.PendingText, "7 writes deferred") || !strings.Contains(p.PendingText, zoneAbbrev(t0)) {
					t.Errorf("team's pending work: %q", p.PendingText)
				}
				return
			}
			// The last run is open: what it deleted (by the title it had,
			// unknown here), created and updated; the hostile title is text.
			if p.OpenRun == "" || !strings.Contains(p.ChangesText, "Team offsite") || !strings.Contains(p.ChangesText, "Stand-up (room 4)") ||
				!strings.Contains(p.ChangesText, "retro-2026-11@example.com") || !strings.Contains(p.ChangesText, time.Date(2026, 12, 3, 9, 30, 0, 0, time.UTC).Local().Format("Mon Jan 2 15:04 ")+zoneAbbrev(time.Date(2026, 12, 3, 9, 30, 0, 0, time.UTC))) {
				t.Errorf("the open run %q lists %q", p.OpenRun, p.ChangesText)
			}
			if !strings.Contains(p.ChangesText, hostileTitle) || p.Scripts != 1 || p.Images != 0 {
				t.Errorf("the hostile title: listed %v, %d scripts (want the probe's alone), %d images (want 0)", strings.Contains(p.ChangesText, hostileTitle), p.Scripts, p.Images)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// zoneAbbrev is the name of the daemon's zone at t ("UTC", "CET"): the
// pages show every time with it.
func zoneAbbrev(t time.Time) string {
	name, _ := t.Local().Zone()
	return name
}
