package status_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/status"
)

// hostile recolours the terminal, rewrites the line with a carriage
// return and retitles the window.
const hostile = "\x1b[31mService Unavailable\rall good\x1b[0m\x1b]0;pwned\x07\u202e"

// rawControl reports the characters that must never reach a terminal raw.
func rawControl(s string) bool {
	return strings.ContainsAny(s, "\x1b\r\x07\u202e\u009b")
}

// rawC0C1 is rawControl for machine formats (JSON, logs), which escape
// control characters but pass other Unicode through.
func rawC0C1(s string) bool {
	return strings.ContainsAny(s, "\x1b\r\x07\u009b")
}

// plantHostile stores hostile text everywhere the report shows stored
// text: an error detail, a note, a rejected event's UID and reason, a
// lease owner.
func plantHostile(t *testing.T) *status.Report {
	t.Helper()
	st, cfg := fixture(t)
	ctx := context.Background()
	hol, _ := st.Subscription(ctx, "holidays")
	hol.LastError = "feed: the feed server answered 503 " + hostile
	hol.Notes = []string{"note " + hostile}
	if err := st.SaveSubscription(ctx, hol); err != nil {
		t.Fatal(err)
	}
	_ = st.PutRejection(ctx, "holidays", calsyncd.Rejection{Key: calsyncd.Key{UID: "uid-" + hostile}, Hash: "h", Reason: "HTTP 400: " + hostile})
	_ = st.SaveAccount(ctx, calsyncd.AccountState{Name: "default"})
	rep, err := status.Build(ctx, st, cfg, nil, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	rep.Accounts[0].Lease = &status.Lease{Owner: "node-" + hostile, ExpiresAt: t0}
	return rep
}

// A feed server's status text must not reach the terminal raw through
// `calsyncd status`.
func TestWriteTableEscapesControlCharacters(t *testing.T) {
	rep := plantHostile(t)
	var b bytes.Buffer
	if err := status.WriteTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if rawControl(out) {
		t.Errorf("the table carries raw control characters:\n%q", out)
	}
	for _, want := range []string{`503 \x1b[31mService Unavailable\rall good`, `note \x1b[31m`, `uid-\x1b[31m`, `HTTP 400: \x1b[31m`, `node-\x1b[31m`, `\u202e`} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// The page is HTML-escaped by html/template; control characters are
// escaped too, for whoever curls it to a terminal.
func TestPageEscapesControlCharacters(t *testing.T) {
	rep := plantHostile(t)
	rep.Subscriptions[1].Notes = append(rep.Subscriptions[1].Notes, `<script>alert(1)</script>`)
	var b bytes.Buffer
	if err := status.RenderPage(&b, rep); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if rawControl(page) {
		t.Errorf("the page carries raw control characters")
	}
	if strings.Contains(page, "<script>") || !strings.Contains(page, "&lt;script&gt;") {
		t.Errorf("the page does not HTML-escape a note")
	}
}

// JSON keeps the text as it is, escaped the JSON way: a machine reads it.
func TestJSONEscapesControlCharacters(t *testing.T) {
	rep := plantHostile(t)
	var b bytes.Buffer
	if err := status.WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	if rawC0C1(b.String()) || !strings.Contains(b.String(), `\u001b[31m`) {
		t.Errorf("JSON: %s", b.String())
	}
	var back status.Report
	// Subscriptions are ordered by id: holidays (the failing one) first.
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || !strings.Contains(back.Subscriptions[0].LastError.Detail, hostile) {
		t.Errorf("JSON does not round-trip the text: %v", err)
	}
}

// hostileFeedServer answers every request with a raw status line whose
// reason phrase is hostile (net/http's own server would never send it).
func hostileFeedServer(t *testing.T) string {
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
				if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
					c.Write([]byte("HTTP/1.1 503 " + hostile + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// End to end from a hostile feed server: the fetch error, as the logs,
// the table and JSON show it, carries no raw control character.
func TestHostileFeedServerCannotDriveTheTerminal(t *testing.T) {
	url := hostileFeedServer(t)
	_, err := fetch.NewFetcher(time.Second, 5*time.Second, 1<<20, feed.CheckBody).Fetch(context.Background(), fetch.Request{URL: url + "/feed.ics"})
	var fe *fetch.Error
	if !errors.As(err, &fe) || fe.StatusCode != 503 {
		t.Fatalf("fetch: %v", err)
	}
	for name, h := range map[string]func(*bytes.Buffer) slog.Handler{
		"text log": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		"json log": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
	} {
		var b bytes.Buffer
		slog.New(h(&b)).Error("sync failed", "subscription", "holidays", "error", err)
		if rawC0C1(b.String()) {
			t.Errorf("%s: %q", name, b.String())
		}
	}
	st, cfg := fixture(t)
	ctx := context.Background()
	hol, _ := st.Subscription(ctx, "holidays")
	hol.LastError, hol.LastErrorClass = err.Error(), fe.ErrorClass()
	if err := st.SaveSubscription(ctx, hol); err != nil {
		t.Fatal(err)
	}
	rep, berr := status.Build(ctx, st, cfg, nil, nil, t0)
	if berr != nil {
		t.Fatal(berr)
	}
	var table, js bytes.Buffer
	_ = status.WriteTable(&table, rep)
	_ = status.WriteJSON(&js, rep)
	if rawControl(table.String()) || rawC0C1(js.String()) {
		t.Errorf("table %q\njson %q", table.String(), js.String())
	}
	if !strings.Contains(table.String(), `\x1b[31mService Unavailable`) {
		t.Errorf("the table does not show the status text escaped:\n%s", table.String())
	}
}
