package subscription_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// parseCounter is an Observer that counts the feeds the runner parses.
type parseCounter struct {
	mu     sync.Mutex
	parses int
}

func (c *parseCounter) FeedFetched(string, string) {}
func (c *parseCounter) RunFinished(string, calsyncd.Outcome, calsyncd.State, time.Duration) {
}

func (c *parseCounter) FeedParsed(string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.parses++
}

func (c *parseCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.parses
}

// An unchanged feed without validators (a file, a server that sends no
// ETag) settles on its body's hash before it is parsed; a changed byte,
// or a changed setting of how the feed is read, parses it again.
func TestUnchangedBodyIsNotParsed(t *testing.T) {
	for _, kind := range []string{"file", "http"} {
		t.Run(kind, func(t *testing.T) {
			h := newHarness(t, teamFeed)
			path := filepath.Join(t.TempDir(), "team.ics")
			setBody := func(b []byte) {
				h.setFeed(b)
				if err := os.WriteFile(path, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			setBody(h.feed())
			if kind == "file" {
				h.cfg.Subscriptions[0].URL = "file://" + path
			}
			obs := &parseCounter{}
			h.runner.Observer = obs
			step := func(name string, want calsyncd.Outcome, parses int) {
				t.Helper()
				rep := h.sync()
				if rep.Run.Outcome != want || obs.count() != parses {
					t.Fatalf("%s: outcome %s (err %v), %d parses; want %s, %d parses", name, rep.Run.Outcome, rep.Err, obs.count(), want, parses)
				}
			}
			step("first sync", calsyncd.OutcomeOK, 1)
			step("unchanged", calsyncd.OutcomeNotModified, 1)
			step("unchanged again", calsyncd.OutcomeNotModified, 1)

			b := h.feed()
			i := bytes.Index(b, []byte("SUMMARY:"))
			b[i+len("SUMMARY:")] ^= 0x20 // one letter's case
			setBody(b)
			step("one byte changed", calsyncd.OutcomeOK, 2)
			step("unchanged after the change", calsyncd.OutcomeNotModified, 2)

			h.cfg.Subscriptions[0].TimeZone = "America/New_York"
			step("how the feed is read changed", calsyncd.OutcomeOK, 3)
			step("unchanged after the setting", calsyncd.OutcomeNotModified, 3)
		})
	}
}
