package googleauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/googleauth"
)

// guardedEmulator is the Calendar emulator behind a check of the bearer
// token, as Google does it.
type guardedEmulator struct {
	fake *gcalfake.Server
	srv  *httptest.Server

	mu      sync.Mutex
	allowed string
	seen    []string // Authorization headers, in order
}

func newGuardedEmulator(t *testing.T) *guardedEmulator {
	g := &guardedEmulator{fake: gcalfake.New(gcalfake.Options{})}
	g.fake.AddCalendar("team@example.com", "Europe/Paris")
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		h := r.Header.Get("Authorization")
		g.seen = append(g.seen, h)
		ok := h == "Bearer "+g.allowed
		g.mu.Unlock()
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"code":401,"message":"Request had invalid authentication credentials.","errors":[{"reason":"authError","domain":"global","message":"Invalid Credentials"}]}}`))
			return
		}
		g.fake.ServeHTTP(w, r)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *guardedEmulator) allow(token string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.allowed = token
}

func (g *guardedEmulator) headers() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.seen...)
}

// The real Calendar client, built from ClientOptions, carries the refreshed
// token to the API; a revoked refresh token stops it before the API is
// called, and the writer's classifier sees an auth failure.
func TestCalendarClientThroughEmulator(t *testing.T) {
	oauth := newFakeOAuth(t)
	api := newGuardedEmulator(t)
	cfg, _ := setup(t, map[string]string{
		"config.yaml":              "state_dir: state\ngoogle:\n  credentials_file: client.json\n  endpoint: " + api.srv.URL + gcalfake.BasePath + "\n",
		"client.json":              oauth.desktopClient(),
		"state/token-default.json": tokenJSON("stale", "refresh-0", time.Now().Add(-time.Hour)),
	})
	ctx := context.Background()
	creds, err := googleauth.Load(ctx, cfg, "", googleauth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := calendar.NewService(ctx, creds.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	api.allow("access-1")
	got, err := svc.Calendars.Get("team@example.com").Context(ctx).Do()
	if err != nil || got.TimeZone != "Europe/Paris" {
		t.Fatalf("Calendars.Get = %v, %v", got, err)
	}
	if _, err := svc.Events.List("team@example.com").MaxResults(1).Context(ctx).Do(); err != nil {
		t.Fatalf("Events.List: %v", err)
	}
	if h := api.headers(); len(h) != 2 || h[0] != "Bearer access-1" || h[1] != "Bearer access-1" {
		t.Errorf("Authorization headers = %q, want the refreshed token twice", h)
	}
	if len(oauth.refreshTokens) != 1 {
		t.Errorf("refreshes = %d, want 1", len(oauth.refreshTokens))
	}

	// Google revokes the grant; the next process start finds an expired
	// access token and a dead refresh token.
	oauth.failWith(400, `{"error":"invalid_grant","error_description":"Token has been expired or revoked."}`)
	cfg2, _ := setup(t, map[string]string{
		"config.yaml":              "state_dir: state\ngoogle:\n  credentials_file: client.json\n  endpoint: " + api.srv.URL + gcalfake.BasePath + "\n",
		"client.json":              oauth.desktopClient(),
		"state/token-default.json": tokenJSON("access-1", "refresh-1", time.Now().Add(-time.Hour)),
	})
	creds, err = googleauth.Load(ctx, cfg2, "", googleauth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err = calendar.NewService(ctx, creds.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	before := len(api.headers())
	_, err = svc.Events.Insert("team@example.com", &calendar.Event{Summary: "x"}).Context(ctx).Do()
	if err == nil {
		t.Fatal("insert succeeded with a revoked token")
	}
	c := gcalwriter.ClassifyAt(err, time.Now())
	if c.Class != calsyncd.ClassAuth || c.Reason != "invalid_grant" {
		t.Errorf("Classify = %+v, want auth/invalid_grant", c)
	}
	if c.Class == calsyncd.ClassRateLimited || c.Class == calsyncd.ClassUsageLimited || c.Class == calsyncd.ClassTransient {
		t.Errorf("a revoked token must not be retried as %q", c.Class)
	}
	var aerr *googleauth.Error
	if !errors.As(err, &aerr) || aerr.Reason != "invalid_grant" {
		t.Errorf("the *googleauth.Error with its advice is lost from the chain: %v", err)
	}
	if !calsyncd.CredentialsRefused(err) {
		t.Errorf("a revoked token is not reported as refused credentials: %v", err)
	}
	if after := len(api.headers()); after != before {
		t.Errorf("the API was called %d times without a token", after-before)
	}
}

// A service account's JWT-minted token reaches the API the same way.
func TestServiceAccountThroughEmulator(t *testing.T) {
	oauth := newFakeOAuth(t)
	api := newGuardedEmulator(t)
	cfg, _ := setup(t, map[string]string{
		"config.yaml": "state_dir: state\ngoogle:\n  credentials_file: sa.json\n  impersonate: alice@example.com\n  endpoint: " + api.srv.URL + gcalfake.BasePath + "\n",
		"sa.json":     oauth.serviceAccountKey(),
	})
	ctx := context.Background()
	creds, err := googleauth.Load(ctx, cfg, "", googleauth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := calendar.NewService(ctx, creds.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	api.allow("sa-access-1")
	if _, err := svc.Calendars.Get("team@example.com").Context(ctx).Do(); err != nil {
		t.Fatalf("Calendars.Get: %v", err)
	}
	// Without the right token the emulator's guard answers 401, which the
	// writer sees as auth: the guard is real.
	api.allow("someone-else")
	_, err = svc.Calendars.Get("team@example.com").Context(ctx).Do()
	if c := gcalwriter.ClassifyAt(err, time.Now()); c.Class != calsyncd.ClassAuth || c.Code != 401 {
		t.Errorf("wrong token: Classify = %+v", c)
	}
}
