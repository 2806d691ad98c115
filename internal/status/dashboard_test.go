package status_test

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/status"
)

// TestEveryRunHasABar: the chart draws each run whatever it did, in the
// colour of what it did (a subscription failing with
// 404s showed an empty chart).
func TestEveryRunHasABar(t *testing.T) {
	for _, tt := range []struct {
		name  string
		run   status.Run
		class string // the bar's segment that must show
	}{
		{"failed", status.Run{Outcome: calsyncd.OutcomeFailed, Error: "feed: 404"}, "x"},
		{"not modified", status.Run{Outcome: calsyncd.OutcomeNotModified}, "n"},
		{"unchanged", status.Run{Outcome: calsyncd.OutcomeOK, Unchanged: 40}, "n"},
		{"deferred", status.Run{Outcome: calsyncd.OutcomeDeferred, Deferred: 1}, "d"},
		{"written", status.Run{Outcome: calsyncd.OutcomeOK, Created: 1}, "w"},
		{"a few deferred beside many writes", status.Run{Outcome: calsyncd.OutcomeDeferred, Created: 500, Deferred: 1}, "d"},
		{"partial", status.Run{Outcome: calsyncd.OutcomePartial, Created: 3, Failed: 1}, "f"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			big := status.Run{Outcome: calsyncd.OutcomeOK, StartedAt: t0.Add(-time.Hour), Created: 1000}
			tt.run.StartedAt = t0
			rep := &status.Report{GeneratedAt: t0, Subscriptions: []status.Subscription{{ID: "s", State: calsyncd.StateActive, History: []status.Run{big, tt.run}, LastRun: &tt.run}}}
			var b bytes.Buffer
			if err := status.RenderPage(&b, rep); err != nil {
				t.Fatal(err)
			}
			groups := regexp.MustCompile(`<g class="run [a-z_]+">.*?</g>`).FindAllString(b.String(), -1)
			if len(groups) != 2 {
				t.Fatalf("%d bars, want 2", len(groups))
			}
			m := regexp.MustCompile(`<rect class="` + tt.class + `"[^>]* height="([0-9.]+)"`).FindStringSubmatch(groups[1])
			if m == nil {
				t.Fatalf("the run's bar has no %q segment: %s", tt.class, groups[1])
			}
			if h, _ := strconv.ParseFloat(m[1], 64); h < 2 {
				t.Errorf("the run's %q segment is %.1f high: not to be seen", tt.class, h)
			}
		})
	}
}

// TestSubscriptionPage: GET /subscriptions/{id} lists the runs and what
// each wrote, escaped; an unknown id is a 404; the token guards it.
func TestSubscriptionPage(t *testing.T) {
	ts, st := server(t, &fakeDaemon{running: true}, "tok")
	dashboard(t, st)
	for _, tt := range []struct {
		path, token string
		code        int
		want        []string
	}{
		{"/subscriptions/team", "tok", 200, []string{`id="runs"`, "Team offsite", "Thu Dec 10 (all day)", "&lt;script&gt;alert(1)&lt;/script&gt;", "event retro-2026-11@example.com", "<details open>"}},
		{"/subscriptions/holidays", "tok", 200, []string{"404 Not Found", `<li class="failed"`, "nothing written"}},
		{"/subscriptions/nope", "tok", 404, nil},
		{"/subscriptions/team", "", 401, nil},
	} {
		code, body := do(t, "GET", ts.URL+tt.path, tt.token)
		if code != tt.code {
			t.Errorf("%s: %d, want %d", tt.path, code, tt.code)
		}
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %q", tt.path, w)
			}
		}
		if strings.Contains(body, "<script>") || strings.Contains(body, "s3cret") || strings.Contains(body, "user:pw") {
			t.Errorf("%s carries a script or a secret", tt.path)
		}
	}
}
