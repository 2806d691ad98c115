package googleauth_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/calsyncd/calsyncd/internal/googleauth"
)

// browser plays the person's browser: it follows the authorisation URL
// through the fake consent screen and back to calsyncd's loopback listener.
type browser struct {
	t     *testing.T
	oauth *fakeOAuth
	// answers are the status codes the loopback listener gave, in order.
	answers []int
	params  url.Values
}

func (b *browser) get(rawURL string) int {
	b.t.Helper()
	resp, err := http.Get(rawURL)
	if err != nil {
		b.t.Fatalf("browser: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	b.answers = append(b.answers, resp.StatusCode)
	return resp.StatusCode
}

func (b *browser) consent(wrongStateFirst bool) func(string) {
	return func(authURL string) {
		u, err := url.Parse(authURL)
		if err != nil {
			b.t.Fatal(err)
		}
		b.params = u.Query()
		redirect := b.params.Get("redirect_uri")
		code := b.oauth.authorize(b.params.Get("code_challenge"), redirect)
		if wrongStateFirst {
			// A page other than Google's tries to plant its own code.
			b.get(redirect + "?" + url.Values{"code": {code}, "state": {"forged"}}.Encode())
			b.get(redirect + "?" + url.Values{"code": {code}}.Encode())
		}
		b.get(redirect + "?" + url.Values{"code": {code}, "state": {b.params.Get("state")}}.Encode())
	}
}

func TestLoginEndToEnd(t *testing.T) {
	oauth := newFakeOAuth(t)
	cfg, dir := setup(t, map[string]string{
		"config.yaml": "state_dir: state\ngoogle:\n  credentials_file: client.json\n",
		"client.json": oauth.desktopClient(),
	})
	b := &browser{t: t, oauth: oauth}
	var out bytes.Buffer
	path, err := googleauth.Login(context.Background(), cfg, "", googleauth.LoginOptions{Out: &out, OpenURL: b.consent(true)})
	if err != nil {
		t.Fatalf("Login: %v", err)
	}

	// The state check refused both forged answers before the real one, and
	// only the real one reached the token endpoint.
	if want := []int{400, 400, 200}; len(b.answers) != 3 || b.answers[0] != want[0] || b.answers[1] != want[1] || b.answers[2] != want[2] {
		t.Errorf("loopback answers = %v, want %v", b.answers, want)
	}
	if len(oauth.verifiers) != 1 {
		t.Fatalf("token exchanges = %d, want 1", len(oauth.verifiers))
	}
	// The authorisation request: loopback on 127.0.0.1 with a port, PKCE
	// S256, offline access with a consent prompt, exactly our scopes.
	p := b.params
	redirect, _ := url.Parse(p.Get("redirect_uri"))
	if redirect.Scheme != "http" || redirect.Hostname() != "127.0.0.1" || redirect.Port() == "" || redirect.Port() == "0" {
		t.Errorf("redirect_uri = %q, want http://127.0.0.1:PORT/", p.Get("redirect_uri"))
	}
	checks := map[string]string{
		"client_id": clientID, "response_type": "code", "access_type": "offline", "prompt": "consent",
		"code_challenge_method": "S256", "scope": strings.Join(append(googleauth.Scopes, googleauth.ListScope), " "),
	}
	for k, want := range checks {
		if got := p.Get(k); got != want {
			t.Errorf("auth URL %s = %q, want %q", k, got, want)
		}
	}
	if len(p.Get("state")) < 20 || p.Get("code_challenge") == "" {
		t.Errorf("weak or missing state/challenge: state %q challenge %q", p.Get("state"), p.Get("code_challenge"))
	}
	if oauth.verifiers[0] == "" || oauth.verifiers[0] == p.Get("code_challenge") {
		t.Errorf("code_verifier %q: the verifier, not the challenge, must reach the token endpoint", oauth.verifiers[0])
	}

	// The person was told what to open.
	if !strings.Contains(out.String(), oauth.srv.URL+"/auth?") || !strings.Contains(out.String(), "ssh -L "+redirect.Port()+":127.0.0.1:"+redirect.Port()) {
		t.Errorf("instructions:\n%s", out.String())
	}

	// The token landed in the default place, private, and loads.
	if want := filepath.Join(dir, "state", "token-default.json"); path != want {
		t.Errorf("token file = %s, want %s", path, want)
	}
	if m := fileMode(t, path); m != 0o600 {
		t.Errorf("token file mode = %04o, want 0600", m)
	}
	tok, err := googleauth.ReadToken(path)
	if err != nil || tok.AccessToken != "access-1" || tok.RefreshToken != "refresh-1" || tok.Expiry.IsZero() {
		t.Fatalf("saved token = %+v, %v", tok, err)
	}
	creds, err := googleauth.Load(context.Background(), cfg, "", googleauth.Options{})
	if err != nil || creds.Kind != googleauth.KindUser || creds.ClientID != clientID {
		t.Fatalf("Load after login: %+v, %v", creds, err)
	}
	if got, err := creds.TokenSource.Token(); err != nil || got.AccessToken != "access-1" {
		t.Fatalf("token after login: %v", err)
	}
	if oauth.count() != 1 {
		t.Errorf("token endpoint requests = %d, want 1 (a fresh token needs no refresh)", oauth.count())
	}
}

func TestLoginFailures(t *testing.T) {
	tests := map[string]struct {
		prepare func(*fakeOAuth)
		// answer is what the consent screen sends back; nil: a code.
		answer  url.Values
		wantErr string
	}{
		"consent denied": {
			answer:  url.Values{"error": {"access_denied"}},
			wantErr: "access_denied",
		},
		"a scope unticked on the consent screen": {
			prepare: func(f *fakeOAuth) { f.scope = "https://www.googleapis.com/auth/calendar.events" },
			wantErr: "calendar.calendars.readonly",
		},
		"no refresh token": {
			prepare: func(f *fakeOAuth) {
				f.failWith(200, `{"access_token":"only-access","token_type":"Bearer","expires_in":3599}`)
			},
			wantErr: "no refresh token",
		},
		"token endpoint refuses": {
			prepare: func(f *fakeOAuth) {
				f.failWith(401, `{"error":"invalid_client","error_description":"The OAuth client was deleted."}`)
			},
			wantErr: "invalid_client",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			oauth := newFakeOAuth(t)
			if tc.prepare != nil {
				tc.prepare(oauth)
			}
			cfg, dir := setup(t, map[string]string{
				"config.yaml": "state_dir: state\ngoogle:\n  credentials_file: client.json\n",
				"client.json": oauth.desktopClient(),
			})
			b := &browser{t: t, oauth: oauth}
			open := func(authURL string) {
				u, _ := url.Parse(authURL)
				q := u.Query()
				ans := tc.answer
				if ans == nil {
					ans = url.Values{"code": {oauth.authorize(q.Get("code_challenge"), q.Get("redirect_uri"))}}
				}
				ans.Set("state", q.Get("state"))
				if code := b.get(q.Get("redirect_uri") + "?" + ans.Encode()); code != http.StatusBadRequest {
					t.Errorf("browser page status = %d, want 400", code)
				}
			}
			_, err := googleauth.Login(context.Background(), cfg, "", googleauth.LoginOptions{OpenURL: open})
			var aerr *googleauth.Error
			if !errors.As(err, &aerr) || aerr.Op != "login" || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want a login *googleauth.Error mentioning %q", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), "calsyncd auth login --config "+cfg.Path) {
				t.Errorf("err lacks the way out: %v", err)
			}
			if strings.Contains(err.Error(), "only-access") || strings.Contains(err.Error(), clientSecret) {
				t.Errorf("err leaks a secret: %v", err)
			}
			if _, serr := os.Stat(filepath.Join(dir, "state", "token-default.json")); !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("a failed login saved a token (%v)", serr)
			}
		})
	}
}

func TestLoginRefusesServiceAccount(t *testing.T) {
	oauth := newFakeOAuth(t)
	cfg, _ := setup(t, map[string]string{
		"config.yaml": "state_dir: state\ngoogle:\n  credentials_file: sa.json\n",
		"sa.json":     oauth.serviceAccountKey(),
	})
	_, err := googleauth.Login(context.Background(), cfg, "", googleauth.LoginOptions{
		OpenURL: func(string) { t.Error("a service account must not be sent to a browser") },
	})
	if err == nil || !strings.Contains(err.Error(), "service-account key") {
		t.Fatalf("err = %v", err)
	}
}

// idleListener never receives a connection: the person never comes back.
type idleListener struct {
	once   sync.Once
	closed chan struct{}
}

func (l *idleListener) Accept() (net.Conn, error) {
	<-l.closed
	return nil, net.ErrClosed
}

func (l *idleListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *idleListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 45678} }

func TestLoginTimesOut(t *testing.T) {
	oauth := newFakeOAuth(t)
	cfg, dir := setup(t, map[string]string{
		"config.yaml": "state_dir: state\naccounts:\n  - name: work\n    credentials_file: client.json\n",
		"client.json": oauth.desktopClient(),
	})
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		_, err := googleauth.Login(context.Background(), cfg, "work", googleauth.LoginOptions{
			Out: &out, Listener: &idleListener{closed: make(chan struct{})},
		})
		var aerr *googleauth.Error
		if !errors.As(err, &aerr) || !strings.Contains(err.Error(), "within 5m0s") ||
			!strings.Contains(err.Error(), "calsyncd auth login --config "+cfg.Path+" --account work") {
			t.Fatalf("err = %v, want a timeout with the command to rerun", err)
		}
		if !strings.Contains(out.String(), "http://127.0.0.1:45678/") {
			t.Errorf("instructions:\n%s", out.String())
		}
	})
	if _, err := os.Stat(filepath.Join(dir, "state")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a timed-out login created the state directory (%v)", err)
	}
}

// A person who unticks only the calendar list's scope still logs in: the
// sync needs Scopes alone, and `calsyncd calendars` says what to do.
func TestLoginWithoutTheListScope(t *testing.T) {
	tests := []struct {
		granted []string
		ok      bool
	}{
		{granted: googleauth.Scopes, ok: true},
		{granted: append([]string{googleauth.ListScope}, googleauth.Scopes...), ok: true},
		{granted: []string{googleauth.ListScope, googleauth.Scopes[0]}, ok: false},
	}
	for _, tt := range tests {
		oauth := newFakeOAuth(t)
		oauth.scope = strings.Join(tt.granted, " ")
		cfg, _ := setup(t, map[string]string{
			"config.yaml": "state_dir: state\ngoogle:\n  credentials_file: client.json\n",
			"client.json": oauth.desktopClient(),
		})
		b := &browser{t: t, oauth: oauth}
		_, err := googleauth.Login(context.Background(), cfg, "", googleauth.LoginOptions{Out: io.Discard, OpenURL: b.consent(false)})
		if (err == nil) != tt.ok {
			t.Errorf("granted %v: err = %v, want ok=%v", tt.granted, err, tt.ok)
		}
	}
}
