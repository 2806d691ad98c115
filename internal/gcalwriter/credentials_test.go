package gcalwriter_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/oauth2"
	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// A token Google revoked answers 401 on the API: CheckAccount says Google
// refused the account's credentials, with one request and the designed
// second try; a calendar that is gone is a verdict on that calendar alone.
func TestCheckAccountSeesARevokedToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		w := h.writer("alice", gcalwriter.Options{})
		if answered, err := w.CheckAccount(context.Background(), sub, cal); !answered || err != nil {
			t.Fatalf("a good token: answered=%v, %v", answered, err)
		}
		// A batch right after the check does not ask for the calendar again.
		before := len(h.recs["alice"].requests())
		apply(t, w, newMem(), create(event("a", "A")))
		if got := h.recs["alice"].requests()[before:]; len(got) != 1 || got[0].method != http.MethodPost {
			t.Errorf("the batch after a check made %v, want the insert alone", got)
		}

		h.fake.Revoke("alice")
		time.Sleep(time.Hour)
		before = len(h.recs["alice"].requests())
		answered, err := w.CheckAccount(context.Background(), sub, cal)
		var werr *gcalwriter.Error
		if !errors.As(err, &werr) || werr.Class != calsyncd.ClassAuth || werr.Code != 401 || !calsyncd.CredentialsRefused(err) || answered {
			t.Fatalf("a revoked token: answered=%v, %v, want a refusal of the credentials", answered, err)
		}
		if n := len(h.recs["alice"].requests()) - before; n != 2 {
			t.Errorf("%d requests, want 2 (the check and one more try)", n)
		}
		// The refusal stands for every calendar of the account, without
		// another request, for as long as the check is shared.
		if _, err := w.CheckAccount(context.Background(), "other", "elsewhere@example.com"); !calsyncd.CredentialsRefused(err) ||
			!strings.Contains(err.Error(), "gcalwriter: other:") {
			t.Errorf("another subscription's calendar of the account: %v, want the same refusal, naming that subscription", err)
		}
		if n := len(h.recs["alice"].requests()) - before; n != 2 {
			t.Errorf("the shared check asked again: %d requests", n)
		}

		h.fake.Reinstate("alice")
		time.Sleep(time.Hour)
		_, err = w.CheckAccount(context.Background(), sub, "gone@example.com")
		if !errors.Is(err, gcalwriter.ErrCalendarNotFound) || calsyncd.CredentialsRefused(err) {
			t.Errorf("a missing calendar: %v, want calendar not found, not a refusal of the credentials", err)
		}
		if answered, err := w.CheckAccount(context.Background(), "other", cal); !answered || err != nil {
			t.Errorf("another calendar, the credentials good: answered=%v, %v", answered, err)
		}
	})
}

// Passes that begin together wait for one check rather than each asking.
func TestCheckAccountIsSharedByConcurrentPasses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{Latency: 200 * time.Millisecond})
		w := h.writer("alice", gcalwriter.Options{})
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if _, err := w.CheckAccount(context.Background(), sub, cal); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if n := len(h.recs["alice"].requests()); n != 1 {
			t.Errorf("20 concurrent checks made %d requests, want 1", n)
		}
	})
}

// tokenEndpoint answers every refresh as Google's token endpoint does for
// a revoked refresh token; the rest goes to the emulator.
type tokenEndpoint struct{ next http.RoundTripper }

func (t tokenEndpoint) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != "oauth2.invalid" {
		return t.next.RoundTrip(r)
	}
	body := `{"error": "invalid_grant", "error_description": "Token has been expired or revoked."}`
	return &http.Response{StatusCode: http.StatusBadRequest, Status: "400 Bad Request", Request: r,
		Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: io.NopCloser(strings.NewReader(body))}, nil
}

// A person's refresh token that Google revoked fails at the token
// endpoint (invalid_grant), before any API request: a refusal of the
// credentials too.
func TestCheckAccountSeesARevokedRefreshToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		base := &http.Client{Transport: tokenEndpoint{next: h.fake.Transport("alice")}}
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, base)
		conf := &oauth2.Config{ClientID: "c", Endpoint: oauth2.Endpoint{TokenURL: "https://oauth2.invalid/token"}}
		expired := &oauth2.Token{AccessToken: "alice", RefreshToken: "r", Expiry: time.Now().Add(-time.Hour)}
		svc, err := calendar.NewService(ctx, option.WithEndpoint(gcalfake.Endpoint), option.WithHTTPClient(conf.Client(ctx, expired)))
		if err != nil {
			t.Fatal(err)
		}
		w := gcalwriter.New(svc, gcalwriter.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Account: "alice", Seed: 1})
		_, err = w.CheckAccount(context.Background(), sub, cal)
		if !calsyncd.CredentialsRefused(err) || calsyncd.ClassOf(err) != calsyncd.ClassAuth {
			t.Fatalf("a revoked refresh token: %v (%s), want a refusal of the credentials", err, calsyncd.ClassOf(err))
		}
		if n := h.fake.Stats().Requests; n != 0 {
			t.Errorf("%d API requests with no token", n)
		}
	})
}

// A rate limit on the check is no verdict, and no refusal.
func TestCheckAccountRateLimitedIsNoVerdict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, gcalfake.Options{})
		rl := &rateLimitedCalendar{next: h.fake.Transport("alice")}
		svc, err := calendar.NewService(context.Background(), option.WithEndpoint(gcalfake.Endpoint), option.WithHTTPClient(&http.Client{Transport: rl}))
		if err != nil {
			t.Fatal(err)
		}
		w := gcalwriter.New(svc, gcalwriter.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Account: "alice", Seed: 1})
		answered, err := w.CheckAccount(context.Background(), sub, cal)
		if err != nil || !answered {
			t.Fatalf("rate-limited: answered=%v, %v, want answered (Google authenticated us) and no verdict", answered, err)
		}
		if rl.hits == 0 {
			t.Fatal("never rate-limited")
		}
	})
}

type rateLimitedCalendar struct {
	next http.RoundTripper
	mu   sync.Mutex
	hits int
}

func (t *rateLimitedCalendar) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.hits++
	t.mu.Unlock()
	body := `{"error":{"code":429,"message":"Rate Limit Exceeded","errors":[{"domain":"usageLimits","reason":"rateLimitExceeded","message":"Rate Limit Exceeded"}]}}`
	return &http.Response{StatusCode: http.StatusTooManyRequests, Status: "429 Too Many Requests", Request: r,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body))}, nil
}
