package deploy_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/status"
)

// envPromtool makes a missing promtool a failure; .ci/run sets it.
const envPromtool = "CALSYNCD_REQUIRE_PROMTOOL"

// TestPrometheusRules checks the rules and runs their unit tests with
// promtool (Debian's prometheus package ships it).
func TestPrometheusRules(t *testing.T) {
	promtool := requireTool(t, "promtool", envPromtool)
	for _, args := range [][]string{
		{"check", "rules", "calsyncd-rules.yml"},
		{"test", "rules", "calsyncd-rules.test.yml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "prometheus"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

type oneSubscription struct{}

func (oneSubscription) Subscriptions(context.Context) ([]calsyncd.SubscriptionState, error) {
	return []calsyncd.SubscriptionState{{ID: "team", State: calsyncd.StateActive}}, nil
}

func (oneSubscription) LastSuccesses(context.Context, []string) (map[string]time.Time, error) {
	return nil, nil
}

// TestRulesReadMetricsThatExist keeps the rules and the daemon in step: every
// calsyncd metric a rule reads is one the daemon exports.
func TestRulesReadMetricsThatExist(t *testing.T) {
	b, err := os.ReadFile("prometheus/calsyncd-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	// The daemon exports per-subscription gauges up to
	// status.SubscriptionSeriesLimit subscriptions, aggregates beyond.
	many := make([]string, status.SubscriptionSeriesLimit+1)
	many[0] = "team"
	for i := 1; i < len(many); i++ {
		many[i] = fmt.Sprint("sub-", i)
	}
	var exported []string
	for _, configured := range [][]string{{"team"}, many} {
		m := status.NewMetrics()
		m.WatchSubscriptions(oneSubscription{}, func() []string { return configured })
		m.Pacing("default", time.Second, time.Now())
		families, err := m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			exported = append(exported, f.GetName())
		}
	}
	used := regexp.MustCompile(`\bcalsyncd_[a-z_]+`).FindAllString(string(b), -1)
	if len(used) == 0 {
		t.Fatal("the rules read no calsyncd metric")
	}
	for _, name := range used {
		if !slices.Contains(exported, name) {
			t.Errorf("the rules read %s, which the daemon does not export", name)
		}
	}
}
