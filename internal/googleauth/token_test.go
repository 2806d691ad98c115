package googleauth_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/googleauth"
)

func TestRefreshedTokenIsPersisted(t *testing.T) {
	for _, rotate := range []bool{false, true} {
		name := map[bool]string{false: "refresh token kept", true: "refresh token rotated"}[rotate]
		t.Run(name, func(t *testing.T) {
			oauth := newFakeOAuth(t)
			oauth.rotate = rotate
			expired := time.Now().Add(-time.Hour)
			cfg, dir := setup(t, map[string]string{
				"config.yaml":       "state_dir: state\ngoogle:\n  credentials_file: client.json\n  token_file: secret/token.json\n",
				"client.json":       oauth.desktopClient(),
				"secret/token.json": tokenJSON("stale-access", "refresh-0", expired),
			})
			path := filepath.Join(dir, "secret", "token.json")
			creds, err := googleauth.Load(context.Background(), cfg, "", googleauth.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if creds.TokenFile != path {
				t.Errorf("TokenFile = %s, want the configured %s", creds.TokenFile, path)
			}
			tok, err := creds.TokenSource.Token()
			if err != nil || tok.AccessToken != "access-1" {
				t.Fatalf("Token = %v, %v", tok, err)
			}
			saved, err := googleauth.ReadToken(path)
			if err != nil {
				t.Fatal(err)
			}
			wantRefresh := "refresh-0"
			if rotate {
				wantRefresh = "refresh-1"
			}
			if saved.AccessToken != "access-1" || saved.RefreshToken != wantRefresh || !saved.Expiry.After(time.Now()) {
				t.Errorf("saved = access %q refresh %q expiry %v, want access-1, %s, in the future",
					saved.AccessToken, saved.RefreshToken, saved.Expiry, wantRefresh)
			}
			if m := fileMode(t, path); m != 0o600 {
				t.Errorf("token mode = %04o, want 0600", m)
			}
			leftovers, _ := filepath.Glob(filepath.Join(dir, "secret", ".*"))
			if len(leftovers) > 0 {
				t.Errorf("temporary files left behind: %v", leftovers)
			}

			// A restart: the saved token is used as it is, with no new login
			// and no refresh while it is valid...
			creds2, err := googleauth.Load(context.Background(), cfg, "", googleauth.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tok, err := creds2.TokenSource.Token(); err != nil || tok.AccessToken != "access-1" {
				t.Fatalf("after restart: %v, %v", tok, err)
			}
			if len(oauth.refreshTokens) != 1 {
				t.Errorf("refreshes = %d, want 1", len(oauth.refreshTokens))
			}
			// ...and once it expires, the refresh presents the refresh token
			// Google handed out last (a rotated one must have been saved).
			os.WriteFile(path, []byte(tokenJSON("access-1", saved.RefreshToken, expired)), 0o600)
			creds3, err := googleauth.Load(context.Background(), cfg, "", googleauth.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := creds3.TokenSource.Token(); err != nil {
				t.Fatal(err)
			}
			if got := oauth.refreshTokens; len(got) != 2 || got[1] != wantRefresh {
				t.Errorf("refresh tokens presented = %v, want the second to be %s", got, wantRefresh)
			}
		})
	}
}

func TestRefreshThatCannotBeSavedStillWorks(t *testing.T) {
	oauth := newFakeOAuth(t)
	cfg, dir := setup(t, map[string]string{
		"config.yaml":    "state_dir: state\ngoogle:\n  credentials_file: client.json\n  token_file: tok/token.json\n",
		"client.json":    oauth.desktopClient(),
		"tok/token.json": tokenJSON("stale-access", "refresh-0", time.Now().Add(-time.Hour)),
	})
	var logs bytes.Buffer
	creds, err := googleauth.Load(context.Background(), cfg, "", googleauth.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	// The directory turns into a file: the save must fail, even for root.
	os.RemoveAll(filepath.Join(dir, "tok"))
	os.WriteFile(filepath.Join(dir, "tok"), nil, 0o600)
	for range 3 {
		if tok, err := creds.TokenSource.Token(); err != nil || tok.AccessToken != "access-1" {
			t.Fatalf("Token = %v, %v", tok, err)
		}
	}
	if n := strings.Count(logs.String(), "could not save the refreshed OAuth token"); n != 1 {
		t.Errorf("warnings = %d, want 1:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "access-1") || strings.Contains(logs.String(), "refresh-0") {
		t.Errorf("the log leaks a token:\n%s", logs.String())
	}
}

func TestWriteTokenReplacesAtomicallyAndTightens(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "token.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	// An old token someone left readable by everyone.
	if err := os.WriteFile(path, []byte(tokenJSON("old", "old-refresh", time.Now())), 0o644); err != nil {
		t.Fatal(err)
	}
	want := &oauth2.Token{AccessToken: "new", TokenType: "Bearer", RefreshToken: "new-refresh", Expiry: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := googleauth.WriteToken(path, want); err != nil {
		t.Fatal(err)
	}
	if m := fileMode(t, path); m != 0o600 {
		t.Errorf("mode = %04o, want 0600", m)
	}
	got, err := googleauth.ReadToken(path)
	if err != nil || got.AccessToken != want.AccessToken || got.RefreshToken != want.RefreshToken || !got.Expiry.Equal(want.Expiry) {
		t.Fatalf("ReadToken = %+v, %v", got, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the token", len(entries))
	}
	// A new directory is created private.
	fresh := filepath.Join(dir, "new-state", "token.json")
	if err := googleauth.WriteToken(fresh, want); err != nil {
		t.Fatal(err)
	}
	if m := fileMode(t, filepath.Dir(fresh)); m != 0o700 {
		t.Errorf("new directory mode = %04o, want 0700", m)
	}
}

func TestReadTokenDoesNotQuoteTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token.json")
	os.WriteFile(path, []byte(`{"access_token": "ya29.secret-stuff", "expiry": "not a time"}`), 0o600)
	_, err := googleauth.ReadToken(path)
	if err == nil || strings.Contains(err.Error(), "ya29") {
		t.Fatalf("err = %v", err)
	}
	if _, err := googleauth.ReadToken(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "no token at") {
		t.Fatalf("missing: err = %v", err)
	}
}

// The writer must see a revoked refresh token as an auth failure and a
// struggling token endpoint as transient: never a rate limit, never the
// other way round.
func TestTokenEndpointFailuresClassify(t *testing.T) {
	tests := map[string]struct {
		status     int
		body       string
		wantClass  calsyncd.ErrorClass
		wantTyped  bool // a *googleauth.Error a person must act on
		wantReason string
		wantHint   string
	}{
		"invalid_grant (revoked or expired)": {
			status: 400, body: `{"error":"invalid_grant","error_description":"Token has been expired or revoked."}`,
			wantClass: calsyncd.ClassAuth, wantTyped: true, wantReason: "invalid_grant", wantHint: "calsyncd auth login --config",
		},
		"client deleted": {
			status: 401, body: `{"error":"deleted_client","error_description":"The OAuth client was deleted."}`,
			wantClass: calsyncd.ClassAuth, wantTyped: true, wantReason: "deleted_client", wantHint: "download its JSON again",
		},
		"token endpoint rate limited": {
			status: 429, body: `{"error":"rate_limit_exceeded"}`,
			wantClass: calsyncd.ClassTransient,
		},
		"token endpoint down": {
			status: 503, body: `<html>unavailable</html>`,
			wantClass: calsyncd.ClassTransient,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			oauth := newFakeOAuth(t)
			oauth.failWith(tc.status, tc.body)
			cfg, _ := setup(t, map[string]string{
				"config.yaml":              "state_dir: state\ngoogle:\n  credentials_file: client.json\n",
				"client.json":              oauth.desktopClient(),
				"state/token-default.json": tokenJSON("stale", "refresh-0", time.Now().Add(-time.Minute)),
			})
			creds, err := googleauth.Load(context.Background(), cfg, "", googleauth.Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = creds.TokenSource.Token()
			c := gcalwriter.ClassifyAt(err, time.Now())
			if c.Class != tc.wantClass {
				t.Errorf("class = %q, want %q (err %v)", c.Class, tc.wantClass, err)
			}
			if c.Class == calsyncd.ClassRateLimited || c.Class == calsyncd.ClassUsageLimited {
				t.Errorf("a token failure was taken for a rate limit")
			}
			var aerr *googleauth.Error
			if errors.As(err, &aerr) != tc.wantTyped {
				t.Fatalf("errors.As *googleauth.Error = %v, want %v (err %v)", !tc.wantTyped, tc.wantTyped, err)
			}
			if tc.wantTyped {
				if aerr.Reason != tc.wantReason || !strings.Contains(err.Error(), tc.wantHint) {
					t.Errorf("err = %v (reason %q), want reason %q and hint %q", err, aerr.Reason, tc.wantReason, tc.wantHint)
				}
				if strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "refresh-0") {
					t.Errorf("err must be one line without secrets: %q", err)
				}
			}
		})
	}
}

// A person runs `calsyncd auth login` while the daemon holds a revoked
// token: the daemon's next attempt uses the new token without a restart.
func TestNewLoginRepairsARunningSource(t *testing.T) {
	oauth := newFakeOAuth(t)
	cfg, dir := setup(t, map[string]string{
		"config.yaml":              "state_dir: state\ngoogle:\n  credentials_file: client.json\n",
		"client.json":              oauth.desktopClient(),
		"state/token-default.json": tokenJSON("stale", "revoked-refresh", time.Now().Add(-time.Hour)),
	})
	creds, err := googleauth.Load(context.Background(), cfg, "", googleauth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	oauth.failWith(400, `{"error":"invalid_grant","error_description":"Token has been expired or revoked."}`)
	if _, err := creds.TokenSource.Token(); gcalwriter.ClassifyAt(err, time.Now()).Class != calsyncd.ClassAuth {
		t.Fatalf("revoked: %v", err)
	}
	if _, err := creds.TokenSource.Token(); err == nil {
		t.Fatal("a failure with an unchanged file must stay a failure")
	}
	// The login writes a fresh token.
	fresh := &oauth2.Token{AccessToken: "fresh-access", TokenType: "Bearer", RefreshToken: "fresh-refresh", Expiry: time.Now().Add(time.Hour)}
	if err := googleauth.WriteToken(filepath.Join(dir, "state", "token-default.json"), fresh); err != nil {
		t.Fatal(err)
	}
	tok, err := creds.TokenSource.Token()
	if err != nil || tok.AccessToken != "fresh-access" {
		t.Fatalf("after a new login: %v, %v", tok, err)
	}
}

// Google refuses an access token that has not expired (its grant was
// revoked, or a person logged in again): the next request does not carry
// the refused token until it expires, but a refreshed one, or the one a new
// login saved.
func TestRefusedAccessTokenIsNotUsedAgain(t *testing.T) {
	for _, newLogin := range []bool{false, true} {
		t.Run(fmt.Sprintf("new login %v", newLogin), func(t *testing.T) {
			oauth := newFakeOAuth(t)
			cfg, dir := setup(t, map[string]string{
				"config.yaml":              "state_dir: state\ngoogle:\n  credentials_file: client.json\n",
				"client.json":              oauth.desktopClient(),
				"state/token-default.json": tokenJSON("stale-access", "refresh-0", time.Now().Add(-time.Hour)),
			})
			var mu sync.Mutex
			var seen []string
			refused := map[string]bool{}
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = append(seen, r.Header.Get("Authorization"))
				mu.Unlock()
				if refused[r.Header.Get("Authorization")] {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				w.WriteHeader(http.StatusOK)
			}))
			t.Cleanup(api.Close)
			creds, err := googleauth.Load(context.Background(), cfg, "", googleauth.Options{})
			if err != nil {
				t.Fatal(err)
			}
			client := creds.HTTPClient()
			get := func() int {
				resp, err := client.Get(api.URL)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if code := get(); code != http.StatusOK {
				t.Fatalf("first request: %d", code)
			}
			// The grant is revoked, and perhaps the person logs in again;
			// the source still holds an access token that has not expired.
			mu.Lock()
			revoked := seen[0]
			mu.Unlock()
			want := "Bearer access-2" // refreshed with refresh-0
			if newLogin {
				fresh := &oauth2.Token{AccessToken: "login-access", TokenType: "Bearer", RefreshToken: "login-refresh", Expiry: time.Now().Add(time.Hour)}
				if err := googleauth.WriteToken(filepath.Join(dir, "state", "token-default.json"), fresh); err != nil {
					t.Fatal(err)
				}
				want = "Bearer login-access"
			}
			mu.Lock()
			refused[revoked] = true
			mu.Unlock()
			if code := get(); code != http.StatusUnauthorized {
				t.Fatalf("with the grant revoked: %d, want the refusal", code)
			}
			if code := get(); code != http.StatusOK {
				t.Fatalf("after the refusal: %d", code)
			}
			mu.Lock()
			defer mu.Unlock()
			if got := seen[len(seen)-1]; got != want {
				t.Errorf("the request after the refusal carried %q, want %q (all: %q)", got, want, seen)
			}
		})
	}
}

// A command that keeps tokens in memory (sync --dry-run) refreshes an
// expired one for itself and leaves the token file byte for byte.
func TestATokenKeptInMemoryLeavesTheFileAsItWas(t *testing.T) {
	oauth := newFakeOAuth(t)
	cfg, dir := setup(t, map[string]string{
		"config.yaml":              "state_dir: state\ngoogle:\n  credentials_file: client.json\n",
		"client.json":              oauth.desktopClient(),
		"state/token-default.json": tokenJSON("stale-access", "refresh-0", time.Now().Add(-time.Hour)),
	})
	creds, err := googleauth.Load(context.Background(), cfg, "", googleauth.Options{KeepInMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(creds.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	fi0, _ := os.Stat(creds.TokenFile)
	for range 2 {
		if tok, err := creds.TokenSource.Token(); err != nil || tok.AccessToken != "access-1" {
			t.Fatalf("Token = %v, %v", tok, err)
		}
	}
	after, _ := os.ReadFile(creds.TokenFile)
	fi1, _ := os.Stat(creds.TokenFile)
	if !bytes.Equal(before, after) || !fi0.ModTime().Equal(fi1.ModTime()) {
		t.Errorf("the token file changed:\n%s\n%s", before, after)
	}
	if len(oauth.refreshTokens) != 1 {
		t.Errorf("refreshes = %d, want 1 (the refreshed token is reused in memory)", len(oauth.refreshTokens))
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "state")); len(entries) != 1 {
		t.Errorf("the state directory holds %d entries, want the token only", len(entries))
	}
}
