package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/status"
)

// echoingFeedServer answers every request as servers that echo the
// request do: the status line quotes the path, the query, the headers and
// the credentials it was sent, in the forms such servers use.
func echoingFeedServer(t *testing.T, code string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				_, pw, _ := r.BasicAuth()
				reason := "Not Found: " + r.RequestURI + " key=" + r.Header.Get("X-Api-Key") + " pw=" + pw +
					" " + strings.ToUpper(r.URL.RawQuery)
				c.Write([]byte("HTTP/1.1 " + code + " " + reason + "\r\nContent-Type: text/calendar; charset=\"" +
					r.URL.RawQuery + "\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestAnEchoingFeedServerReachesNoOutput runs every command that shows a
// feed's failure — the sync's log and JSON, the dry-run, status in text
// and JSON, check, and the daemon's /status, page and metrics — against a
// feed server whose status text echoes the feed's secrets, and searches
// each output for any of them.
func TestAnEchoingFeedServerReachesNoOutput(t *testing.T) {
	secrets := []string{"pathtok3n-99aa", "qu3rytoken-5b", "h3aderkey-77", "b4sicpass-11"}
	for _, code := range []string{"404", "401", "503", "418"} {
		t.Run(code, func(t *testing.T) {
			feedURL := echoingFeedServer(t, code)
			fake := gcalfake.New(gcalfake.Options{})
			fake.AddCalendar("team@example.com", "UTC")
			srv := httptest.NewServer(fake)
			t.Cleanup(srv.Close)
			api := srv.URL
			dir := t.TempDir()
			listen := freeAddr(t)
			t.Setenv("ECHO_FEED_URL", feedURL+"/private/pathtok3n-99aa/basic.ics?token=qu3rytoken-5b")
			t.Setenv("ECHO_KEY", "h3aderkey-77")
			t.Setenv("ECHO_PASSWORD", "b4sicpass-11")
			cfg := writeFile(t, dir, "config.yaml", `state_dir: state
listen: `+listen+`
schedule: "@every 24h"
log:
  format: json
  level: debug
status:
  token: st4tus-token-echo
google:
  endpoint: `+api+gcalfake.BasePath+`
subscriptions:
  - id: team
    url: ${ECHO_FEED_URL}
    calendar: team@example.com
    headers:
      X-Api-Key: ${ECHO_KEY}
    basic_auth:
      username: me
      password: ${ECHO_PASSWORD}
`)
			outputs := map[string]string{}
			for _, args := range [][]string{
				{"sync", "--config", cfg},
				{"sync", "--config", cfg, "--json"},
				{"sync", "--config", cfg, "--dry-run"},
				{"sync", "--config", cfg, "--dry-run", "--json"},
				{"status", "--config", cfg},
				{"status", "--config", cfg, "--json"},
				{"check", "--config", cfg},
				{"check", "--config", cfg, "--json"},
			} {
				out, errOut, _ := run(t, args...)
				outputs[strings.Join(args[0:1], " ")+" "+strings.Join(args[3:], " ")] = out + errOut
			}
			// The failure must be there to be shown: a test that found no
			// error would prove nothing.
			if !strings.Contains(outputs["status --json"], code) {
				t.Fatalf("status --json does not show the %s failure:\n%s", code, outputs["status --json"])
			}
			for name, text := range daemonOutputs(t, cfg, listen) {
				outputs[name] = text
			}
			for name, text := range outputs {
				for _, s := range secrets {
					if strings.Contains(strings.ToLower(text), strings.ToLower(s)) {
						t.Errorf("%s shows %s:\n%s", name, s, text)
					}
				}
			}
		})
	}
}

// daemonOutputs runs the daemon, has it sync once, and returns its log,
// /status, page and metrics.
func daemonOutputs(t *testing.T, cfg, listen string) map[string]string {
	t.Helper()
	logs := &syncBuffer{}
	m := &Main{Stdin: strings.NewReader(""), Stdout: logs, Stderr: logs}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, []string{"run", "--config", cfg}) }()
	defer func() {
		cancel()
		<-done
	}()
	base := "http://" + listen
	get := func(method, path string) string {
		req, _ := http.NewRequest(method, base+path, nil)
		req.Header.Set("Authorization", "Bearer st4tus-token-echo")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	deadline := time.Now().Add(15 * time.Second)
	var runID int64
	for runID == 0 {
		var res struct {
			RunID int64 `json:"run_id"`
		}
		json.Unmarshal([]byte(get("POST", "/subscriptions/team/sync")), &res)
		runID = res.RunID
		if time.Now().After(deadline) {
			t.Fatalf("could not trigger a run\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond) // the daemon is starting, or a run holds the lock
	}
	var statusJSON string
	for {
		statusJSON = get("GET", "/status")
		var rep status.Report
		if json.Unmarshal([]byte(statusJSON), &rep) == nil && len(rep.Subscriptions) == 1 {
			if r := rep.Subscriptions[0].LastRun; r != nil && r.ID == runID && r.FinishedAt != nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d never finished\n%s", runID, logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return map[string]string{"/status": statusJSON, "page": get("GET", "/"), "/metrics": get("GET", "/metrics"),
		"subscription page": get("GET", "/subscriptions/team"), "daemon log": logs.String()}
}
