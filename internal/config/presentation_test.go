package config_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/render"
)

const presentationBase = `state_dir: /tmp/x
subscriptions:
  - id: team
    url: https://example.com/a.ics
    calendar: team@example.com
`

func TestPresentationKeysParse(t *testing.T) {
	cfg, err := parse(t, `state_dir: /tmp/x
defaults:
  color: sage
  reminders:
    all_day: none
subscriptions:
  - id: team
    url: https://example.com/a.ics
    calendar: team@example.com
    filters:
      - include:
          categories: "(?i)^work$"
      - exclude:
          summary: "(?i)^(canceled|cancelled):"
    title: "[Team] {summary}"
    color: banana
    privacy: full
    visibility: public
    transparency: free
    reminders:
      timed: [{popup: 10m}, {email: 1d}]
  - id: other
    url: https://example.com/b.ics
    calendar: other@example.com
    reminders:
      timed: feed
  - id: plain
    url: https://example.com/c.ics
    calendar: plain@example.com
    color: ""
    reminders:
      all_day: default
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ id, want string }{
		{"team", "filters=[include categories (?i)^work$, exclude summary (?i)^(canceled|cancelled):] title=[Team] {summary} color=5 privacy=full visibility=public transparency=transparent timed=popup:10,email:1440 all_day=none"},
		{"other", "filters=[] title= color=2 privacy=full visibility= transparency= timed=feed all_day=none"},
		{"plain", "filters=[] title= color= privacy=full visibility= transparency= timed= all_day=default"},
	} {
		s, _ := cfg.Subscription(tc.id)
		p, err := cfg.RenderPolicy(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := describePolicy(p); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.id, got, tc.want)
		}
	}
}

func describePolicy(p *render.Policy) string {
	var filters []string
	for _, r := range p.Filters {
		kind := "include"
		if r.Exclude {
			kind = "exclude"
		}
		filters = append(filters, fmt.Sprintf("%s %s %s", kind, r.Field, r.Pattern))
	}
	title := ""
	if p.Title != nil {
		title = p.Title.String()
	}
	return fmt.Sprintf("filters=[%s] title=%s color=%s privacy=%s visibility=%s transparency=%s timed=%s all_day=%s",
		strings.Join(filters, ", "), title, p.ColorID, p.Privacy, p.Visibility, p.Transparency, p.Timed, p.AllDay)
}

// TestDefaultsFillWhatASubscriptionLeavesOut: every key of the defaults
// block, a subscription's own value (even an empty one) winning; reminders
// merge per kind; a subscription's filters replace the defaults' (an
// empty list clears them).
func TestDefaultsFillWhatASubscriptionLeavesOut(t *testing.T) {
	cfg, err := parse(t, `state_dir: /tmp/x
defaults:
  filters:
    - exclude:
        status: "^CANCELLED$"
  title: "{subscription}: {summary}"
  color: "7"
  privacy: busy
  visibility: private
  transparency: busy
  reminders:
    timed: default
    all_day: none
subscriptions:
  - id: inherits
    url: https://example.com/a.ics
    calendar: a@example.com
  - id: own
    url: https://example.com/b.ics
    calendar: b@example.com
    filters: []
    title: ""
    color: ""
    privacy: full
    visibility: feed
    transparency: feed
    reminders:
      timed: none
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"inherits": "filters=[exclude status ^CANCELLED$] title={subscription}: {summary} color=7 privacy=busy visibility=private transparency=opaque timed=default all_day=none",
		"own":      "filters=[] title= color= privacy=full visibility= transparency= timed=none all_day=none",
	}
	for id, w := range want {
		s, _ := cfg.Subscription(id)
		p, err := cfg.RenderPolicy(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := describePolicy(p); got != w {
			t.Errorf("%s:\n got %s\nwant %s", id, got, w)
		}
	}
}

// TestPresentationErrorsNameFileLineAndKey: every mistake is a
// configuration error at its line and key, before any run.
func TestPresentationErrorsNameFileLineAndKey(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		line       int
		key, msg   string
	}{
		{"unknown colour", "    color: red\n", 6, "subscriptions[0].color", `unknown colour "red"`},
		{"colour id out of range", "    color: \"12\"\n", 6, "subscriptions[0].color", "unknown colour"},
		{"unknown placeholder", "    title: \"{title} x\"\n", 6, "subscriptions[0].title", "unknown placeholder {title}"},
		{"unclosed brace", "    title: \"{summary\"\n", 6, "subscriptions[0].title", "unclosed {"},
		{"bad privacy", "    privacy: secret\n", 6, "subscriptions[0].privacy", "must be full or busy"},
		{"bad visibility", "    visibility: confidential\n", 6, "subscriptions[0].visibility", "must be feed, default, public or private"},
		{"bad transparency", "    transparency: opaque\n", 6, "subscriptions[0].transparency", "must be feed, busy or free"},
		{"bad pattern", "    filters:\n      - exclude:\n          summary: \"(\"\n", 8, "subscriptions[0].filters[0].exclude.summary", "not an RE2 pattern"},
		{"unknown field", "    filters:\n      - include:\n          title: x\n", 8, "subscriptions[0].filters[0].include.title", "unknown key"},
		{"two fields in one filter", "    filters:\n      - include:\n          summary: a\n          location: b\n", 7, "subscriptions[0].filters[0].include", "exactly one field"},
		{"include and exclude in one filter", "    filters:\n      - include:\n          summary: a\n        exclude:\n          location: b\n", 7, "subscriptions[0].filters[0]", "either include: or exclude:"},
		{"unknown reminder mode", "    reminders:\n      timed: sometimes\n", 7, "subscriptions[0].reminders.timed", "must be default, none, feed or a list"},
		{"unknown reminder method", "    reminders:\n      timed: [{sms: 10m}]\n", 7, "subscriptions[0].reminders.timed[0].sms", "unknown reminder method"},
		{"beyond 4 weeks", "    reminders:\n      all_day: [{email: 29d}]\n", 7, "subscriptions[0].reminders.all_day[0].email", "0 to 40320 minutes"},
		{"not whole minutes", "    reminders:\n      timed: [{popup: 90s}]\n", 7, "subscriptions[0].reminders.timed[0].popup", "whole minutes"},
		{"six reminders", "    reminders:\n      timed: [{popup: 1m}, {popup: 2m}, {popup: 3m}, {popup: 4m}, {popup: 5m}, {popup: 6m}]\n", 7,
			"subscriptions[0].reminders.timed", "at most 5"},
		{"unknown reminders kind", "    reminders:\n      allday: none\n", 7, "subscriptions[0].reminders.allday", `did you mean "all_day"`},
		{"in the defaults", "defaults:\n  color: purple\n", 7, "defaults.color", "unknown colour"},
		{"defaults has no id", "defaults:\n  id: x\n", 7, "defaults.id", "unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, presentationBase+tc.yaml, nil)
			var es config.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %v, want a configuration error", err)
			}
			e := es[0]
			if e.File != "/etc/calsyncd/config.yaml" || e.Line != tc.line || e.Key != tc.key || !strings.Contains(e.Msg, tc.msg) {
				t.Errorf("error %s:%d: %s: %s\nwant line %d key %s msg containing %q", e.File, e.Line, e.Key, e.Msg, tc.line, tc.key, tc.msg)
			}
		})
	}
}

// TestPresentationLimitsAccepted: Google's limits themselves are fine.
func TestPresentationLimitsAccepted(t *testing.T) {
	_, err := parse(t, presentationBase+"    reminders:\n      timed: [{popup: 0m}, {email: 28d}, {popup: 1m}, {popup: 2m}, {popup: 3m}]\n      all_day: []\n", nil)
	if err != nil {
		t.Fatal(err)
	}
}

func TestBusyWithARevealingTitleWarns(t *testing.T) {
	cfg, err := parse(t, presentationBase+"    privacy: busy\n    title: \"Busy: {summary}\"\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ws := withoutCredentialWarnings(cfg.Warnings); len(ws) != 1 || ws[0].Key != "subscriptions[0].title" || ws[0].Line != 7 {
		t.Errorf("warnings = %v", ws)
	}
	cfg, err = parse(t, presentationBase+"    privacy: busy\n    title: \"Blocked ({subscription})\"\n", nil)
	if err != nil || len(withoutCredentialWarnings(cfg.Warnings)) != 0 {
		t.Errorf("warnings = %v (%v), want none", cfg.Warnings, err)
	}
}

// TestExamplePresentationChangesNothing: config.example.yaml shows every
// presentation key with its default, and those change nothing.
func TestExamplePresentationChangesNothing(t *testing.T) {
	cfg, _, err := config.LoadAllowUnset("../../config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cfg.Subscriptions {
		p, err := cfg.RenderPolicy(s)
		if err != nil || !p.IsZero() {
			t.Errorf("%s: policy %+v (%v), want one that changes nothing", s.ID, p, err)
		}
		if s.Filters == nil || s.Title == nil || s.Color == nil || s.Privacy == nil || s.Visibility == nil || s.Transparency == nil || s.Reminders == nil {
			t.Errorf("%s: the example leaves a presentation key out: %+v", s.ID, s.Presentation)
		}
	}
}
