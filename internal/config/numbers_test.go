package config_test

import (
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/config"
)

// numericKey is one numeric configuration key and what it must refuse.
type numericKey struct {
	kind string // duration | int | float | size
	// zeroOK: zero means something ("unbounded", "never", "none").
	zeroOK bool
	// ok is a sane value that must be accepted; tooBig just past the
	// documented range (as is a bigger-than-int64 value, which every key
	// is also tried with).
	ok, tooBig string
	// tooSmall is just below the range, when that is not zero or negative.
	tooSmall string
}

// numericKeys is every numeric, duration and size key of the file.
// TestEveryNumericKeyIsChecked fails when a key is added to Config without
// a line here.
var numericKeys = map[string]numericKey{
	"store.lease_ttl":                {kind: "duration", ok: "60s", tooBig: "2h", tooSmall: "50ms"},
	"writer.concurrency":             {kind: "int", ok: "2", tooBig: "101"},
	"writer.spacing":                 {kind: "duration", ok: "250ms", tooBig: "2m"},
	"writer.max_spacing":             {kind: "duration", ok: "5s", tooBig: "11m", tooSmall: "100ms"},
	"writer.max_attempts":            {kind: "int", ok: "5", tooBig: "101"},
	"writer.max_retry_wait":          {kind: "duration", ok: "15s", tooBig: "2h"},
	"writer.backfill_share":          {kind: "float", ok: "0.75", tooBig: "1.01"},
	"writer.backfill_threshold":      {kind: "int", ok: "50", tooBig: "1000001"},
	"writer.request_timeout":         {kind: "duration", ok: "30s", tooBig: "11m"},
	"writer.throttle_window":         {kind: "duration", ok: "30s", tooBig: "25h"},
	"writer.throttle_window_max":     {kind: "duration", ok: "15m", tooBig: "8d", tooSmall: "10s"},
	"writer.retry_base":              {kind: "duration", ok: "1s", tooBig: "2h"},
	"writer.retry_cap":               {kind: "duration", ok: "32s", tooBig: "25h", tooSmall: "500ms"},
	"feed.max_size":                  {kind: "size", ok: "20MiB", tooBig: "2GiB", tooSmall: "1000B"},
	"feed.timeout":                   {kind: "duration", ok: "60s", tooBig: "2h"},
	"feed.connect_timeout":           {kind: "duration", ok: "10s", tooBig: "11m"},
	"window.past":                    {kind: "duration", zeroOK: true, ok: "30d", tooBig: "3661d"},
	"window.future":                  {kind: "duration", zeroOK: true, ok: "365d", tooBig: "365000d"},
	"sync.error_threshold":           {kind: "int", ok: "3", tooBig: "1001"},
	"sync.error_max_interval":        {kind: "duration", ok: "24h", tooBig: "31d", tooSmall: "30s"},
	"sync.reconcile_interval":        {kind: "duration", zeroOK: true, ok: "24h", tooBig: "366d", tooSmall: "30s"},
	"sync.shutdown_timeout":          {kind: "duration", ok: "30s", tooBig: "2h"},
	"sync.delete_guard.min_deletes":  {kind: "int", zeroOK: true, ok: "10", tooBig: "1000001"},
	"sync.delete_guard.max_fraction": {kind: "float", ok: "0.5", tooBig: "1.5"},
	"sync.delete_guard.confirm_runs": {kind: "int", ok: "3", tooBig: "1001"},
	"sync.retention.max_age":         {kind: "duration", zeroOK: true, ok: "90d", tooBig: "3661d", tooSmall: "23h"},
	"sync.retention.max_runs":        {kind: "int", ok: "500", tooBig: "10000001", tooSmall: "9"},
	"subscriptions[].window.past":    {kind: "duration", zeroOK: true, ok: "7d", tooBig: "3661d"},
	"subscriptions[].window.future":  {kind: "duration", zeroOK: true, ok: "365d", tooBig: "365000d"},
}

// hostile are the values every key of a kind must refuse: not a number,
// infinite, negative and overflowing, in the spellings YAML and Go accept.
var hostile = map[string][]string{
	"duration": {"NaNd", "nand", "Infd", "+Infd", "-Infd", ".nan", ".inf", "-.inf", "NaN", "-1s", "-1d", "-0.5d",
		"1e300d", "1e19d", "106752d", "9999999999999h", "2562048h", "0x1p10d"},
	"int":   {"NaN", ".nan", ".inf", "-.inf", "Inf", "-1", "99999999999999999999", "9223372036854775808", "1e3", "2.5", "0x10"},
	"float": {"NaN", ".nan", "nan", "Inf", "+Inf", "-Inf", "Infinity", ".inf", "-.inf", "-0.5", "1e400", "-1e400"},
	"size": {"NaN", "NaNMiB", "InfGiB", "+InfB", ".inf", "-1MiB", "-1", "1e300GiB", "9999999999GiB",
		"99999999999999999999"},
}

// keyYAML writes a configuration that sets key to value.
func keyYAML(key, value string) (yaml string, line int) {
	const sub = "subscriptions:\n  - id: team\n    url: https://example.com/a.ics\n    calendar: a@example.com\n"
	if rest, ok := strings.CutPrefix(key, "subscriptions[]."); ok {
		parts := strings.Split(rest, ".")
		return sub + "    " + parts[0] + ":\n      " + parts[1] + ": " + value + "\n", 6
	}
	parts := strings.Split(key, ".")
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(strings.Repeat("  ", i) + p + ":")
		if i == len(parts)-1 {
			b.WriteString(" " + value)
		}
		b.WriteString("\n")
	}
	return b.String(), len(parts)
}

func wantKey(key string) string { return strings.Replace(key, "[]", "[0]", 1) }

func expectRefused(t *testing.T, key, value string) {
	t.Helper()
	yaml, line := keyYAML(key, value)
	_, err := parse(t, yaml, nil)
	var errs config.Errors
	if !errors.As(err, &errs) {
		t.Errorf("%s: %s accepted (err %v)", key, value, err)
		return
	}
	for _, e := range errs {
		if e.Key == wantKey(key) && e.Line == line {
			return
		}
	}
	t.Errorf("%s: %s: no error at line %d for the key; got:\n%v", key, value, line, err)
}

func TestNumericKeysRefuseWhatIsNotASaneNumber(t *testing.T) {
	for key, k := range numericKeys {
		t.Run(key, func(t *testing.T) {
			yaml, _ := keyYAML(key, k.ok)
			if _, err := parse(t, yaml, nil); err != nil {
				t.Fatalf("sane value %s refused: %v", k.ok, err)
			}
			bad := append([]string{k.tooBig}, hostile[k.kind]...)
			if !k.zeroOK {
				bad = append(bad, "0")
			}
			if k.tooSmall != "" {
				bad = append(bad, k.tooSmall)
			}
			for _, v := range bad {
				expectRefused(t, key, v)
			}
			if k.zeroOK {
				yaml, _ := keyYAML(key, "0")
				if _, err := parse(t, yaml, nil); err != nil {
					t.Errorf("0 refused: %v", err)
				}
			}
		})
	}
}

// TestEveryNumericKeyIsChecked walks Config for numeric fields, so a new
// key cannot skip the table above.
func TestEveryNumericKeyIsChecked(t *testing.T) {
	var found []string
	var walk func(rt reflect.Type, prefix string)
	walk = func(rt reflect.Type, prefix string) {
		for i := 0; i < rt.NumField(); i++ {
			f := rt.Field(i)
			tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if tag == "" || tag == "-" {
				continue
			}
			key := prefix + tag
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch ft.Kind() {
			case reflect.Struct:
				walk(ft, key+".")
			case reflect.Slice:
				if ft.Elem().Kind() == reflect.Struct {
					walk(ft.Elem(), key+"[].")
				}
			case reflect.Int, reflect.Int64, reflect.Float64:
				found = append(found, key)
			}
		}
	}
	walk(reflect.TypeOf(config.Config{}), "")
	sort.Strings(found)
	for _, key := range found {
		if _, ok := numericKeys[key]; !ok {
			t.Errorf("numeric key %s has no line in numericKeys", key)
		}
	}
	if len(found) != len(numericKeys) {
		t.Errorf("found %d numeric keys, the table has %d: %v", len(found), len(numericKeys), found)
	}
}

// The examples, each with the message an operator reads.
func TestNumbersThatAreNotNumbers(t *testing.T) {
	tests := []struct {
		name, yaml, key, says string
		line                  int
	}{
		{"NaN guard", "sync:\n  delete_guard:\n    max_fraction: NaN\n", "sync.delete_guard.max_fraction", "finite number", 3},
		{"NaN spacing", "writer:\n  spacing: NaNd\n", "writer.spacing", "not a number", 2},
		{"absurd spacing", "writer:\n  spacing: 1e300d\n", "writer.spacing", "too long", 2},
		{"thousand-year window", "window:\n  future: 365000d\n", "window.future", "too long", 2},
		{"ten-year-and-a-day window", "window:\n  future: 3661d\n", "window.future", "at most 3660d", 2},
		{"NaN shutdown", "sync:\n  shutdown_timeout: NaNd\n", "sync.shutdown_timeout", "not a number", 2},
		{"negative schedule", "schedule: \"@every -1h\"\n", "schedule", "at least 1s", 1},
		{"zero schedule", "schedule: \"@every 0s\"\n", "schedule", "at least 1s", 1},
		{"sub-second schedule", "schedule: \"@every 500ms\"\n", "schedule", "at least 1s", 1},
		{"schedule that never fires", "state_dir: /tmp/x\nschedule: \"0 0 31 2 *\"\n", "schedule", "never fires", 2},
		{"zoned schedule that never fires", "schedule: \"CRON_TZ=Europe/Berlin 0 7 30 2 *\"\n", "schedule", "never fires", 1},
		{"owner with capitals", "state_dir: /tmp/x\nowner: Prod\n", "owner", "lowercase letters", 2},
		{"owner with a space", "owner: \"prod box\"\n", "owner", "lowercase letters", 1},
		{"owner too long", "owner: " + strings.Repeat("a", 64) + "\n", "owner", "at most 63", 1},
		{"port too big", "listen: 127.0.0.1:99999\n", "listen", "port must be 1 to 65535", 1},
		{"negative port", "listen: 127.0.0.1:-1\n", "listen", "port must be 1 to 65535", 1},
		{"port zero", "listen: 127.0.0.1:0\n", "listen", "port must be 1 to 65535", 1},
		{"named port", "listen: 127.0.0.1:http\n", "listen", "port must be 1 to 65535", 1},
		{"header with CRLF", "subscriptions:\n  - id: team\n    url: https://example.com/a.ics\n    calendar: a@example.com\n    headers:\n      X-Feed-Token: \"abc\\r\\nX-Evil: 1\"\n",
			"subscriptions[0].headers.X-Feed-Token", "line break or control character", 6},
		{"header with NUL", "subscriptions:\n  - id: team\n    url: https://example.com/a.ics\n    calendar: a@example.com\n    headers:\n      X-Feed-Token: \"abc\\0\"\n",
			"subscriptions[0].headers.X-Feed-Token", "control character", 6},
		{"empty file", "", "", "empty", 0},
		{"only a comment", "# nothing here\n", "", "empty", 0},
		{"only a document marker", "---\n", "", "empty", 0},
		{"a null document", "~\n", "", "empty", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.yaml, nil)
			var errs config.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("accepted (err %v)", err)
			}
			for _, e := range errs {
				if e.Key == tt.key && e.Line == tt.line && strings.Contains(e.Msg, tt.says) {
					if strings.Contains(e.Error(), "abc") {
						t.Errorf("the error repeats the header's value: %v", e)
					}
					return
				}
			}
			t.Fatalf("no error at line %d key %q saying %q; got:\n%v", tt.line, tt.key, tt.says, err)
		})
	}
}

func TestSaneSchedulesAndHeadersPass(t *testing.T) {
	for _, yaml := range []string{
		"schedule: \"@every 2s\"\n",
		"schedule: \"@every 30m\"\n",
		"schedule: \"@hourly\"\n",
		"schedule: \"*/15 * * * *\"\n",
		"schedule: \"CRON_TZ=Europe/Berlin 0 7 * * *\"\n",
		// Only in leap years, but within the next five whatever the year.
		"schedule: \"0 0 29 2 *\"\n",
		"listen: 127.0.0.1:65535\n",
		"listen: \"[::1]:8765\"\n",
		"subscriptions:\n  - id: team\n    url: https://example.com/a.ics\n    calendar: a@example.com\n    headers:\n      X-Feed-Token: \"a\\tb c\"\n",
	} {
		if _, err := parse(t, yaml, nil); err != nil {
			t.Errorf("%q refused: %v", yaml, err)
		}
	}
}

func TestAShutdownTimeoutTheUnitDoesNotWaitForIsWarned(t *testing.T) {
	for _, tc := range []struct {
		timeout string
		warn    bool
	}{{"30s", false}, {"34s", false}, {"35s", true}, {"1h", true}} {
		cfg, err := config.Parse("c.yaml", []byte("sync:\n  shutdown_timeout: "+tc.timeout+"\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range cfg.Warnings {
			if w.Key == "sync.shutdown_timeout" {
				got = append(got, w.String())
			}
		}
		if (len(got) > 0) != tc.warn {
			t.Errorf("shutdown_timeout %s: warnings %q, want a warning: %v", tc.timeout, got, tc.warn)
		}
		if tc.warn && !strings.Contains(got[0], "c.yaml:2: sync.shutdown_timeout") {
			t.Errorf("warning does not name the line: %q", got[0])
		}
	}
}

func TestACostlyFilterPatternIsWarned(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		warn    bool
	}{{`(?i)standup`, false}, {`^(team|staff|board|review)$`, false}, {`[\\p{L}\\p{N}]{1000}Z`, true}, {`(a{20}){20}`, true}} {
		yaml := "subscriptions:\n  - id: a\n    url: https://feeds.invalid/a.ics\n    calendar: primary\n    filters:\n      - exclude:\n          description: \"" + tc.pattern + "\"\n"
		cfg, err := config.Parse("c.yaml", []byte(yaml), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		var got []string
		for _, w := range cfg.Warnings {
			if strings.Contains(w.Key, "filters[0]") {
				got = append(got, w.String())
			}
		}
		if (len(got) > 0) != tc.warn {
			t.Errorf("%s: warnings %q, want one: %v", tc.pattern, got, tc.warn)
		}
		if tc.warn && !strings.Contains(got[0], "c.yaml:7: subscriptions[0].filters[0].exclude.description") {
			t.Errorf("warning does not name the line and key: %q", got[0])
		}
	}
}
