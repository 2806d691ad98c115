package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestDemoTellsItsStory runs `calsyncd demo --once` and checks its
// structured log: the first sync, the change and the second sync that
// writes exactly the changed events, the deferral under a rate limit with
// the subscription ACTIVE, and the recovery.
func TestDemoTellsItsStory(t *testing.T) {
	var out, logs bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &logs}
	err := m.Run(context.Background(), []string{"demo", "--once", "--listen", "127.0.0.1:0", "--log-format", "json"})
	if err != nil {
		t.Fatalf("demo --once: %v\n%s", err, logs.String())
	}
	type line struct {
		Msg          string `json:"msg"`
		Step         string `json:"demo_step"`
		Subscription string `json:"subscription"`
		Outcome      string `json:"outcome"`
		State        string `json:"state"`
		Created      int    `json:"created"`
		Updated      int    `json:"updated"`
		Deleted      int    `json:"deleted"`
		Deferred     int    `json:"deferred"`
	}
	steps := map[string][]line{}
	var order []string
	progress := 0
	sc := bufio.NewScanner(&logs)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("a log line is not JSON: %s", sc.Text())
		}
		if l.Msg == "writing" {
			progress++
		}
		if l.Step == "" {
			continue
		}
		if len(order) == 0 || order[len(order)-1] != l.Step {
			order = append(order, l.Step)
		}
		steps[l.Step] = append(steps[l.Step], l)
	}
	want := []string{"first_sync", "filters", "change", "second_sync", "rate_limit_burst", "deferred", "waiting", "recovery", "done"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Fatalf("steps %v, want %v", order, want)
	}
	created := map[string]int{}
	for _, l := range steps["first_sync"] {
		if l.Subscription != "" {
			created[l.Subscription] = l.Created
		}
	}
	if created["team"] != 9 || created["outlook"] != 4 || created["holidays"] != 45 || created["community"] != 4 {
		t.Errorf("first sync created %v", created)
	}
	if progress == 0 {
		t.Error("no progress lines for the larger feed")
	}
	for _, l := range steps["second_sync"] {
		writes := l.Created + l.Updated + l.Deleted
		switch l.Subscription {
		case "team":
			if l.Created != 1 || l.Updated != 1 || l.Deleted != 1 {
				t.Errorf("team's second sync wrote %d/%d/%d, want 1/1/1", l.Created, l.Updated, l.Deleted)
			}
		default:
			if writes != 0 {
				t.Errorf("%s unchanged but its second sync wrote %d", l.Subscription, writes)
			}
		}
	}
	d := steps["deferred"][0]
	r := steps["recovery"][0]
	if d.Outcome != "deferred" || d.Deferred == 0 || d.State != "ACTIVE" {
		t.Errorf("deferral: %+v", d)
	}
	if r.Outcome != "ok" || r.Deferred != 0 || r.State != "ACTIVE" || d.Updated+r.Updated != 12 {
		t.Errorf("recovery: %+v (after %d written under the limit)", r, d.Updated)
	}
}
