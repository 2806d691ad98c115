package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/config"
)

// TestAFileURLMustNameAnAbsolutePath: file://./x and file://feeds/x read
// a host and validated, then failed at every run with network advice; they
// are refused with the URL meant, from the configuration's directory.
func TestAFileURLMustNameAnAbsolutePath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	for _, tc := range []struct {
		url, want string // want: "" valid, else the URL the message suggests
	}{
		{"file:///srv/feeds/x.ics", ""},
		{"file://localhost/srv/feeds/x.ics", ""},
		{"file://LOCALHOST/srv/x.ics", ""},
		{"file://./feeds/x.ics", "file://" + filepath.Join(dir, "feeds/x.ics")},
		{"file://feeds/x.ics", "file://" + filepath.Join(dir, "feeds/x.ics")},
		{"file:feeds/x.ics", "file://" + filepath.Join(dir, "feeds/x.ics")},
		{"file://../other/x.ics", "file://" + filepath.Join(filepath.Dir(dir), "other/x.ics")},
		{"file://server.example/share/x.ics", "file://" + filepath.Join(dir, "server.example/share/x.ics")},
	} {
		yaml := "subscriptions:\n  - id: a\n    url: " + tc.url + "\n    calendar: primary\n"
		_, err := config.Parse(file, []byte(yaml), nil)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.url, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s validated", tc.url)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, file+":3: subscriptions[0].url") || !strings.Contains(msg, "did you mean "+tc.want+"?") {
			t.Errorf("%s: %s\nwant the line, the key and %s", tc.url, msg, tc.want)
		}
	}
}
