package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// playBrowser reads a login's output until it prints the URL to open, then
// does what Google and the browser would: sends the browser back to the
// redirect URI with a code and the state it was given.
func playBrowser(t *testing.T, out io.Reader) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if !strings.HasPrefix(line, "https://") {
				continue
			}
			u, err := url.Parse(line)
			if err != nil {
				done <- err
				return
			}
			q := u.Query()
			back := q.Get("redirect_uri") + "?" + url.Values{"code": {"code-1"}, "state": {q.Get("state")}}.Encode()
			resp, err := http.Get(back)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
			io.Copy(io.Discard, out) // let the login print the rest
			return
		}
		done <- io.ErrUnexpectedEOF
	}()
	return done
}

// A person's token endpoint that grants a refresh token.
func fakeOAuthTokens(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "login-access", "refresh_token": "login-refresh",
			"token_type": "Bearer", "expires_in": 3599})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// auth login needs state_dir and the account, not the feeds' secrets: it
// runs as the service's user without the environment file only systemd
// reads, noting what it leaves unset; an unset variable it needs fails.
func TestAuthLoginWithoutTheServiceEnvironment(t *testing.T) {
	unsetEnv(t, "FEED_TOKEN", "STATUS_TOKEN", "CREDENTIALS")
	tokens := fakeOAuthTokens(t)
	dir := t.TempDir()
	writeFile(t, dir, "client.json", desktopClient(tokens.URL))
	subs := "subscriptions:\n  - id: team\n    url: https://example.com/private-${FEED_TOKEN}/a.ics\n    calendar: a@example.com\n"
	cfg := writeFile(t, dir, "config.yaml", "state_dir: state\nstatus:\n  token: ${STATUS_TOKEN}\n"+
		"google:\n  credentials_file: client.json\n"+subs)

	pr, pw := io.Pipe()
	var stderr strings.Builder
	m := &Main{Stdin: strings.NewReader(""), Stdout: pw, Stderr: &stderr}
	browsed := playBrowser(t, pr)
	err := m.Run(context.Background(), []string{"auth", "login", "--config", cfg})
	pw.Close()
	if err != nil {
		t.Fatalf("auth login: %v\n%s", err, stderr.String())
	}
	if err := <-browsed; err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		cfg + ":3: status.token: environment variable STATUS_TOKEN is not set (not needed here)",
		cfg + ":8: subscriptions[0].url: environment variable FEED_TOKEN is not set (not needed here)",
	} {
		if !strings.Contains(stderr.String(), "note: "+want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "state", "token-default.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}

	needs := writeFile(t, dir, "needs.yaml", "state_dir: state\ngoogle:\n  credentials_file: ${CREDENTIALS}\n"+subs)
	_, errOut, code := run(t, "auth", "login", "--config", needs)
	if code != 1 || !strings.Contains(errOut, needs+":3: google.credentials_file: environment variable CREDENTIALS is not set") {
		t.Errorf("an unset variable auth login needs: code %d, stderr %q", code, errOut)
	}
}
