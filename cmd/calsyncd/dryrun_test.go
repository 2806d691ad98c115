package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/store"
	"github.com/calsyncd/calsyncd/internal/subscription/preview"
)

type previewDoc struct {
	DryRun        bool                  `json:"dry_run"`
	Subscriptions []preview.PreviewJSON `json:"subscriptions"`
}

func writesOf(fake *gcalfake.Server) int {
	st := fake.Stats()
	return st.ByOp["insert"] + st.ByOp["update"] + st.ByOp["patch"] + st.ByOp["delete"]
}

// TestSyncDryRun: `sync --dry-run` prints the plan and writes nothing — no
// state database where none was, none of its bytes where one is, nothing
// to Google — and the next real sync does what it printed.
func TestSyncDryRun(t *testing.T) {
	fake := gcalfake.New(gcalfake.Options{})
	fake.AddCalendar("team@example.com", "UTC")
	api := httptest.NewServer(fake)
	defer api.Close()
	feedBody, err := os.ReadFile("../../testdata/feeds/team.ics")
	if err != nil {
		t.Fatal(err)
	}
	feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(feedBody) }))
	defer feeds.Close()
	dir := t.TempDir()
	base := `state_dir: state
google:
  endpoint: ` + api.URL + gcalfake.BasePath + `
subscriptions:
  - id: team
    url: ` + feeds.URL + `/private-token/team.ics
    calendar: team@example.com
    filters:
      - exclude:
          summary: "^On-call"
`
	cfg := writeFile(t, dir, "config.yaml", base)
	db := filepath.Join(dir, "state", "calsyncd.db")

	out, stderr, code := run(t, "sync", "--config", cfg, "--dry-run", "--json")
	if code != 0 {
		t.Fatalf("dry-run: code %d\n%s\n%s", code, out, stderr)
	}
	var doc previewDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil || !doc.DryRun || len(doc.Subscriptions) != 1 {
		t.Fatalf("dry-run --json = %s (%v)", out, err)
	}
	first := doc.Subscriptions[0]
	if len(first.Create) != 8 || first.Excluded != 1 || first.ExcludedEvents[0].Summary != "On-call handover" || first.Error != nil {
		t.Fatalf("first preview = %+v", first)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("the dry-run created the state database (%v)", err)
	}
	if writesOf(fake) != 0 {
		t.Fatalf("the dry-run wrote to Google %d times", writesOf(fake))
	}
	if strings.Contains(out+stderr, "private-token") {
		t.Errorf("the dry-run leaks the feed URL:\n%s\n%s", out, stderr)
	}
	if _, _, code := run(t, "sync", "--config", cfg); code != 0 {
		t.Fatalf("sync: code %d", code)
	}
	if n := len(fake.Events("team@example.com")); n != 7 {
		t.Fatalf("Google holds %d events, want 7 (the cancelled instance is not listed)", n)
	}

	// Now colour the subscription: every live event (7; the cancelled
	// instance shows nothing) is an update of its
	// colour; the preview says so and changes nothing.
	writeFile(t, dir, "config.yaml", base+"    color: banana\n")
	// A daemon holds the account's lease: a sync would hand itself over,
	// a dry-run runs here, read-only.
	daemon, err := store.Open(t.Context(), "sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer daemon.Close()
	if _, claimed, err := daemon.ClaimLease(t.Context(), "default", "daemon/1/x", time.Hour); err != nil || !claimed {
		t.Fatalf("lease: %v %v", claimed, err)
	}
	// The database and its write-ahead log (the daemon's lease is in it).
	dbBytes := func() []byte {
		main, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		wal, _ := os.ReadFile(db + "-wal")
		return append(append(main, '|'), wal...)
	}
	before := dbBytes()
	writes := writesOf(fake)
	out, _, code = run(t, "sync", "--config", cfg, "--dry-run", "--json", "team")
	if code != 0 {
		t.Fatalf("dry-run: code %d\n%s", code, out)
	}
	doc = previewDoc{}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	pv := doc.Subscriptions[0]
	for _, u := range pv.Update {
		if strings.Join(u.Fields, ",") != "color" {
			t.Errorf("update of %q changes %v, want [color]", u.Summary, u.Fields)
		}
	}
	if !bytes.Equal(before, dbBytes()) || writesOf(fake) != writes {
		t.Fatalf("the dry-run changed the database (%v) or wrote to Google (%d)", !bytes.Equal(before, dbBytes()), writesOf(fake)-writes)
	}
	text, _, code := run(t, "sync", "--config", cfg, "--dry-run")
	if code != 0 || !strings.Contains(text, "team: 0 to create, 7 to update, 0 to delete") || !strings.Contains(text, "nothing was written") {
		t.Errorf("dry-run text (code %d):\n%s", code, text)
	}
	if err := daemon.ReleaseLease(t.Context(), "default", "daemon/1/x"); err != nil {
		t.Fatal(err)
	}
	out, _, code = run(t, "sync", "--config", cfg, "--json")
	var doc2 status.SyncDoc
	err = json.Unmarshal([]byte(out), &doc2)
	res := doc2.Subscriptions
	if err != nil || code != 0 {
		t.Fatalf("sync --json = %s (%v)", out, err)
	}
	if r := res[0].Run; r.Updated != len(pv.Update) || r.Created != len(pv.Create) || r.Deleted != len(pv.Delete) || writesOf(fake)-writes != len(pv.Update) {
		t.Errorf("the sync did %+v (%d writes); the preview said %d updates", r, writesOf(fake)-writes, len(pv.Update))
	}
}
