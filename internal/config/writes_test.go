package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
)

func TestWritePolicyKeys(t *testing.T) {
	const sub = "subscriptions:\n  - id: a\n    url: https://feeds.invalid/a.ics\n    calendar: primary\n"
	for _, tc := range []struct {
		name, yaml string
		want       config.Writes
		err        string // a substring of the error, "" none
	}{
		{name: "default mirrors", yaml: sub},
		{name: "deletes never", yaml: sub + "    deletes: never\n", want: config.Writes{NeverDelete: true}},
		{name: "updates never", yaml: sub + "    updates: never\n", want: config.Writes{NeverUpdate: true}},
		{name: "from the defaults block", yaml: "defaults:\n  deletes: never\n  updates: never\n" + sub, want: config.Writes{NeverDelete: true, NeverUpdate: true}},
		{name: "the subscription's own first", yaml: "defaults:\n  deletes: never\n" + sub + "    deletes: mirror\n"},
		{name: "a typo", yaml: sub + "    deletes: nevr\n", err: `c.yaml:5: subscriptions[0].deletes: must be mirror (the default) or never (never keeps in Google the events that leave the feed (add-only)), got "nevr"`},
		{name: "a typo in defaults", yaml: "defaults:\n  updates: no\n" + sub, err: `c.yaml:2: defaults.updates: must be mirror (the default) or never`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse("c.yaml", []byte(tc.yaml), nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.EffectiveWrites(cfg.Subscriptions[0]); got != tc.want {
				t.Errorf("writes = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestWindowPast(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		reach      time.Duration // PastReach of the subscription's window
		now        bool
		err, warn  string // substrings, "" none
	}{
		{name: "default 30d", yaml: "window:\n  future: 90d\n", reach: 30 * 24 * time.Hour},
		{name: "now", yaml: "window:\n  past: now\n", now: true, reach: time.Nanosecond},
		{name: "now, any case", yaml: "window:\n  past: NOW\n", now: true, reach: time.Nanosecond},
		{name: "0 is unbounded, and warned", yaml: "window:\n  past: 0\n", reach: 0,
			warn: `c.yaml:2: window.past: 0 means no limit: every past event of the feed is mirrored; for future events only write "now"`},
		{name: "7d", yaml: "window:\n  past: 7d\n", reach: 7 * 24 * time.Hour},
		{name: "a word", yaml: "window:\n  past: today\n", err: `c.yaml:2: window.past: invalid duration "today" (use e.g. 250ms, 15s, 2h or 30d); or now for future events only, 0 for no limit`},
		{name: "too long", yaml: "window:\n  past: 4000d\n", err: `window.past: must be 0 (unbounded; now is future events only) or at most 3660d, got 4000d`},
		{name: "a subscription's now", yaml: "subscriptions:\n  - id: a\n    url: https://feeds.invalid/a.ics\n    calendar: primary\n    window:\n      past: now\n      future: 90d\n",
			now: true, reach: time.Nanosecond},
		{name: "a subscription's 0", yaml: "subscriptions:\n  - id: a\n    url: https://feeds.invalid/a.ics\n    calendar: primary\n    window:\n      past: 0\n",
			warn: "c.yaml:6: subscriptions[0].window.past: 0 means no limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse("c.yaml", []byte(tc.yaml), nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := cfg.Window
			if len(cfg.Subscriptions) > 0 {
				w = cfg.EffectiveWindow(cfg.Subscriptions[0])
			}
			if w.PastNow != tc.now || w.PastReach() != tc.reach {
				t.Errorf("window %+v: now %t, reach %s; want %t, %s", w, w.PastNow, w.PastReach(), tc.now, tc.reach)
			}
			var warned []string
			for _, x := range cfg.Warnings {
				if strings.HasSuffix(x.Key, "window.past") {
					warned = append(warned, x.String())
				}
			}
			if tc.warn == "" && len(warned) > 0 || tc.warn != "" && (len(warned) != 1 || !strings.Contains(warned[0], tc.warn)) {
				t.Errorf("warnings %q, want %q", warned, tc.warn)
			}
		})
	}
}
