package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// fakeTokenEndpoint grants every request the same access token.
func fakeTokenEndpoint(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token":"cmd-access-secret","token_type":"Bearer","expires_in":3599}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func serviceAccountKey(t *testing.T, tokenURL string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "client_email": "sync@proj.iam.gserviceaccount.com", "client_id": "42",
		"private_key_id": "k1", "token_uri": tokenURL,
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
	})
	return string(b)
}

func desktopClient(tokenURL string) string {
	b, _ := json.Marshal(map[string]any{"installed": map[string]any{
		"client_id": "99-desk.apps.googleusercontent.com", "client_secret": "desk-secret",
		"auth_uri": "https://accounts.example/auth", "token_uri": tokenURL, "redirect_uris": []string{"http://localhost"},
	}})
	return string(b)
}

func TestAuthStatus(t *testing.T) {
	tokens, _ := fakeTokenEndpoint(t)
	dir := t.TempDir()
	writeFile(t, dir, "sa.json", serviceAccountKey(t, tokens.URL))
	writeFile(t, dir, "client.json", desktopClient(tokens.URL))
	os.Mkdir(filepath.Join(dir, "state"), 0o700)
	expiry, _ := json.Marshal(time.Now().Add(time.Hour))
	writeFile(t, dir, "state/token-me.json", `{"access_token":"me-access-secret","refresh_token":"me-refresh-secret","expiry":`+string(expiry)+`}`)
	cfg := writeFile(t, dir, "config.yaml", `state_dir: state
google:
  credentials_file: sa.json
  impersonate: alice@example.com
accounts:
  - name: me
    credentials_file: client.json
`)
	out, stderr, code := run(t, "auth", "status", "--config", cfg)
	if code != 0 {
		t.Fatalf("auth status: code %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{
		"default: service account sync@proj.iam.gserviceaccount.com acting as alice@example.com",
		"Google issued an access token",
		"me: OAuth user token (client 99-desk.apps.googleusercontent.com)",
		"token file   " + filepath.Join(dir, "state", "token-me.json"),
		"access token valid until",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("auth status lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+stderr, "secret") {
		t.Errorf("auth status prints a secret:\n%s\n%s", out, stderr)
	}

	// A key others can read: a warning; with --strict-perms, a failure.
	os.Chmod(filepath.Join(dir, "sa.json"), 0o644)
	out, _, code = run(t, "auth", "status", "--config", cfg)
	if code != 0 || !strings.Contains(out, "warning      credentials file "+filepath.Join(dir, "sa.json")+" is accessible to group or others (mode 0644)") {
		t.Errorf("loose key: code %d\n%s", code, out)
	}
	if _, stderr, code = run(t, "auth", "status", "--config", cfg, "--strict-perms"); code != 1 || !strings.Contains(stderr, "--strict-perms") {
		t.Errorf("--strict-perms: code %d, stderr %q", code, stderr)
	}

	// An account that was never logged in fails with the way out.
	os.Remove(filepath.Join(dir, "state", "token-me.json"))
	out, _, code = run(t, "auth", "status", "--config", cfg)
	if code != 1 || !strings.Contains(out, "run `calsyncd auth login --config "+cfg+" --account me`") {
		t.Errorf("no token: code %d\n%s", code, out)
	}
}

func TestAuthUsage(t *testing.T) {
	if _, stderr, code := run(t, "auth"); code != 2 || !strings.Contains(stderr, "login") {
		t.Errorf("auth: code %d\n%s", code, stderr)
	}
	if _, _, code := run(t, "auth", "frob"); code != 2 {
		t.Errorf("auth frob: code %d", code)
	}
	tokens, _ := fakeTokenEndpoint(t)
	dir := t.TempDir()
	writeFile(t, dir, "sa.json", serviceAccountKey(t, tokens.URL))
	cfg := writeFile(t, dir, "config.yaml", "state_dir: state\ngoogle:\n  credentials_file: sa.json\n")
	if _, stderr, code := run(t, "auth", "login", "--config", cfg); code != 1 || !strings.Contains(stderr, "service accounts need no login") {
		t.Errorf("login with a service account: code %d\n%s", code, stderr)
	}
}

// sync authenticates through googleauth: the emulator only answers requests
// that carry the service account's token.
func TestSyncWithServiceAccount(t *testing.T) {
	tokens, minted := fakeTokenEndpoint(t)
	fake := gcalfake.New(gcalfake.Options{})
	fake.AddCalendar("team@example.com", "UTC")
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer cmd-access-secret" {
			http.Error(w, `{"error":{"code":401,"message":"no","errors":[{"reason":"authError"}]}}`, http.StatusUnauthorized)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	defer api.Close()
	feedBody, err := os.ReadFile("../../testdata/feeds/team.ics")
	if err != nil {
		t.Fatal(err)
	}
	var body atomic.Value
	body.Store(feedBody)
	feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body.Load().([]byte)) }))
	defer feeds.Close()
	dir := t.TempDir()
	key := writeFile(t, dir, "sa.json", serviceAccountKey(t, tokens.URL))
	cfg := writeFile(t, dir, "config.yaml", `state_dir: state
google:
  credentials_file: sa.json
  endpoint: `+api.URL+gcalfake.BasePath+`
subscriptions:
  - id: team
    url: `+feeds.URL+`/team.ics
    calendar: team@example.com
`)
	os.Chmod(key, 0o640)
	_, stderr, code := run(t, "sync", "--config", cfg, "--strict-perms")
	if code != 1 || !strings.Contains(stderr, "refusing to start (--strict-perms)") || !strings.Contains(stderr, "chmod 600 "+key) {
		t.Fatalf("--strict-perms with a loose key: code %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "state")); !os.IsNotExist(err) {
		t.Errorf("a refused start touched the state directory (%v)", err)
	}

	out, stderr, code := run(t, "sync", "--config", cfg, "--json")
	if code != 0 {
		t.Fatalf("sync: code %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "key or token file is accessible to group or others") {
		t.Errorf("no start-up warning about the loose key:\n%s", stderr)
	}
	if n := len(fake.Events("team@example.com")); n != 8 || minted.Load() != 1 {
		t.Errorf("events stored = %d (want 8: six single events, a series and one exception), tokens minted = %d (want 1)", n, minted.Load())
	}
	if strings.Contains(out+stderr, "cmd-access-secret") {
		t.Errorf("sync prints the access token")
	}

	// The key is gone when the feed has news: the run fails and says what
	// to do.
	os.Remove(key)
	body.Store([]byte(strings.Replace(string(feedBody), "SUMMARY:", "SUMMARY:Moved: ", 1)))
	out, _, code = run(t, "sync", "--config", cfg, "--json")
	if code != 1 || !strings.Contains(out, "does not exist") || !strings.Contains(out, `"class": "auth"`) {
		t.Errorf("missing key: code %d, want 1 and an auth failure\n%s", code, out)
	}
}
