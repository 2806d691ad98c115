package gcalfake_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/calsyncd/calsyncd/internal/gcalfake"
)

// memService is the real Google client talking to the emulator in memory,
// as user: usable inside a synctest bubble.
func memService(t *testing.T, fake *gcalfake.Server, user string) *calendar.Service {
	t.Helper()
	svc, err := calendar.NewService(context.Background(), option.WithEndpoint(gcalfake.Endpoint), option.WithHTTPClient(fake.Client(user)))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func newFake(opts gcalfake.Options) *gcalfake.Server {
	fake := gcalfake.New(opts)
	fake.AddCalendar(cal, "UTC")
	fake.AddCalendar("other@example.com", "UTC")
	return fake
}

func insert(svc *calendar.Service, calID string, i int) error {
	_, err := svc.Events.Insert(calID, timed(fmt.Sprintf("evt%05d", i), "x")).Do()
	return err
}

func TestQuotaModes(t *testing.T) {
	tests := []struct {
		mode       gcalfake.LimitMode
		code       int
		reason     string
		retryAfter string
	}{
		{gcalfake.RateLimit403, 403, "rateLimitExceeded", ""},
		{gcalfake.UserRateLimit403, 403, "userRateLimitExceeded", ""},
		{gcalfake.RateLimit429, 429, "rateLimitExceeded", "2"},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := newFake(gcalfake.Options{Quota: gcalfake.Quota{Rate: 0.5, Burst: 3, Mode: tt.mode, RetryAfter: tt.mode == gcalfake.RateLimit429}})
				svc := memService(t, fake, "alice")
				for i := range 3 {
					if err := insert(svc, cal, i); err != nil {
						t.Fatalf("write %d within the burst: %v", i, err)
					}
				}
				gerr := apiErr(t, insert(svc, cal, 3), tt.code, tt.reason)
				if got := gerr.Header.Get("Retry-After"); got != tt.retryAfter {
					t.Errorf("Retry-After = %q, want %q", got, tt.retryAfter)
				}
				// Reads are not writes: the quota does not touch them.
				if _, err := svc.Events.Get(cal, "evt00000").Do(); err != nil {
					t.Fatalf("read under the write quota: %v", err)
				}
				// A refused write took no token; two seconds refill one.
				time.Sleep(2 * time.Second)
				if err := insert(svc, cal, 3); err != nil {
					t.Fatalf("write after the refill: %v", err)
				}
				apiErr(t, insert(svc, cal, 4), tt.code, tt.reason)
				st := fake.Stats()
				if st.AcceptedWrites != 4 || st.RateLimited != 2 || st.Rejected() != 2 || st.Accepted != 5 {
					t.Errorf("stats %+v", st)
				}
			})
		})
	}
}

func TestQuotaIsPerUserAndOptionallyPerCalendar(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(gcalfake.Options{Quota: gcalfake.Quota{Rate: 0.01, Burst: 1}})
		alice, bob := memService(t, fake, "alice"), memService(t, fake, "bob")
		if err := insert(alice, cal, 0); err != nil {
			t.Fatal(err)
		}
		apiErr(t, insert(alice, "other@example.com", 1), 403, "rateLimitExceeded")
		if err := insert(bob, cal, 2); err != nil {
			t.Fatalf("bob is throttled by alice's writes: %v", err)
		}
		// quotaUser charges another user, as with domain-wide delegation.
		ev := timed("evt00003", "x")
		if _, err := alice.Events.Insert(cal, ev).Do(googleapi.QuotaUser("carol")); err != nil {
			t.Fatalf("write charged to carol: %v", err)
		}

		fake.SetQuota(gcalfake.Quota{Rate: 0.01, Burst: 1, PerCalendar: true})
		if err := insert(alice, cal, 4); err != nil {
			t.Fatal(err)
		}
		if err := insert(alice, "other@example.com", 5); err != nil {
			t.Fatalf("per-calendar quota shared between calendars: %v", err)
		}
		apiErr(t, insert(alice, cal, 6), 403, "rateLimitExceeded")
	})
}

func TestUsageLimitLocksTheUsersWritesNotReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(gcalfake.Options{UsageLimit: gcalfake.UsageLimit{Creates: 5, Window: time.Minute, Lockout: time.Hour}})
		svc, bob := memService(t, fake, "alice"), memService(t, fake, "bob")
		for i := range 5 {
			if err := insert(svc, cal, i); err != nil {
				t.Fatal(err)
			}
		}
		gerr := apiErr(t, insert(svc, cal, 5), 403, "quotaExceeded")
		if gerr.Message != "Calendar usage limits exceeded." {
			t.Errorf("message %q", gerr.Message)
		}
		// Read-only: updates and deletes are refused too, reads work.
		apiErr(t, svc.Events.Delete(cal, "evt00000").Do(), 403, "quotaExceeded")
		if _, err := svc.Events.Get(cal, "evt00000").Do(); err != nil {
			t.Fatalf("read during the lockout: %v", err)
		}
		if err := insert(bob, cal, 100); err != nil {
			t.Fatalf("another user is locked out too: %v", err)
		}
		time.Sleep(59 * time.Minute)
		apiErr(t, svc.Events.Delete(cal, "evt00000").Do(), 403, "quotaExceeded")
		time.Sleep(time.Minute)
		if err := svc.Events.Delete(cal, "evt00000").Do(); err != nil {
			t.Fatalf("write after the lockout: %v", err)
		}
		// Creates spread beyond the window never trip it.
		for i := 10; i < 20; i++ {
			time.Sleep(15 * time.Second)
			if err := insert(svc, cal, i); err != nil {
				t.Fatalf("create %d at 4/min: %v", i, err)
			}
		}
		if st := fake.Stats(); st.UsageLimited != 3 {
			t.Errorf("UsageLimited = %d, want 3", st.UsageLimited)
		}
	})
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name   string
		faults gcalfake.Faults
		code   int
		reason string
	}{
		{"backend error", gcalfake.Faults{BackendError: 1}, 500, "backendError"},
		{"unavailable", gcalfake.Faults{Unavailable: 1}, 503, "backendError"},
		{"unauthorized", gcalfake.Faults{Unauthorized: true}, 401, "authError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake(gcalfake.Options{Faults: tt.faults})
			svc := memService(t, fake, "alice")
			apiErr(t, insert(svc, cal, 0), tt.code, tt.reason)
			_, err := svc.Events.Get(cal, "evt00000").Do()
			apiErr(t, err, tt.code, tt.reason)
			if len(fake.Events(cal)) != 0 {
				t.Error("a refused write was applied")
			}
			if st := fake.Stats(); st.Faults != 2 || st.Accepted != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestFaultsAreReproducibleFromTheSeed(t *testing.T) {
	pattern := func(seed uint64) string {
		fake := newFake(gcalfake.Options{Seed: seed, Faults: gcalfake.Faults{BackendError: 0.3, Unavailable: 0.2}})
		svc := memService(t, fake, "alice")
		var b []byte
		for i := range 40 {
			var gerr *googleapi.Error
			switch err := insert(svc, cal, i); {
			case err == nil:
				b = append(b, '.')
			case errors.As(err, &gerr):
				b = append(b, byte('0'+gerr.Code%10))
			default:
				t.Fatal(err)
			}
		}
		return string(b)
	}
	a, b := pattern(42), pattern(42)
	if a != b {
		t.Fatalf("same seed, different faults:\n%s\n%s", a, b)
	}
	if c := pattern(43); c == a {
		t.Errorf("different seeds, same faults: %s", a)
	}
	t.Logf("seed 42: %s", a)
}

func TestLostResponseAppliesTheWrite(t *testing.T) {
	fake := newFake(gcalfake.Options{Faults: gcalfake.Faults{LostResponse: 1}})
	svc := memService(t, fake, "alice")
	err := insert(svc, cal, 0)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, gcalfake.ErrConnectionLost) {
		t.Fatalf("insert = %v, want a lost connection", err)
	}
	if n := len(fake.Events(cal)); n != 1 {
		t.Fatalf("the write was not applied: %d events", n)
	}
	// Reads are never lost; the retry of the insert meets its own event.
	if _, err := svc.Events.Get(cal, "evt00000").Do(); err != nil {
		t.Fatal(err)
	}
	apiErr(t, insert(svc, cal, 0), 409, "duplicate")
	if st := fake.Stats(); st.LostResponses != 1 || st.AcceptedWrites != 1 {
		t.Errorf("stats %+v", st)
	}
}

// Over a real connection the emulator drops it, as a broken network would.
func TestLostResponseOverTCP(t *testing.T) {
	fake := newFake(gcalfake.Options{Faults: gcalfake.Faults{LostResponse: 1}})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	svc, err := calendar.NewService(context.Background(), option.WithEndpoint(srv.URL+gcalfake.BasePath), option.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	err = insert(svc, cal, 0)
	var gerr *googleapi.Error
	if err == nil || errors.As(err, &gerr) {
		t.Fatalf("insert = %v, want a transport error", err)
	}
	if n := len(fake.Events(cal)); n != 1 {
		t.Fatalf("the write was not applied: %d events", n)
	}
}

func TestLatencyAndMaxInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(gcalfake.Options{Latency: 300 * time.Millisecond})
		svc := memService(t, fake, "alice")
		begin := time.Now()
		var wg sync.WaitGroup
		for i := range 3 {
			wg.Go(func() {
				if err := insert(svc, cal, i); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if took := time.Since(begin); took != 300*time.Millisecond {
			t.Errorf("three parallel requests took %s, want 300ms", took)
		}
		if st := fake.Stats(); st.MaxInFlight != 3 {
			t.Errorf("MaxInFlight = %d, want 3", st.MaxInFlight)
		}
	})
}

// A quota changed mid-run keeps what each bucket holds: a drop does not
// hand out a fresh burst, and a rise refills at the new rate from then on.
func TestChangeQuotaKeepsTheBuckets(t *testing.T) {
	tests := []struct {
		name     string
		from, to gcalfake.Quota
		// before and after the change, once the bucket is empty; then how
		// many writes are taken before the first refusal.
		before, after time.Duration
		taken         int
	}{
		{"drop", gcalfake.Quota{Rate: 2, Burst: 10}, gcalfake.Quota{Rate: 0.5, Burst: 10}, 2 * time.Second, 4 * time.Second, 4 + 2},
		{"rise", gcalfake.Quota{Rate: 0.5, Burst: 10}, gcalfake.Quota{Rate: 2, Burst: 10}, 2 * time.Second, 4 * time.Second, 1 + 8},
		{"smaller burst", gcalfake.Quota{Rate: 2, Burst: 10}, gcalfake.Quota{Rate: 2, Burst: 3}, 4 * time.Second, time.Second, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := newFake(gcalfake.Options{Quota: tt.from})
				svc := memService(t, fake, "alice")
				n := 0
				for insert(svc, cal, n) == nil {
					n++
				}
				if n != tt.from.Burst {
					t.Fatalf("the first bucket took %d writes, want its burst %d", n, tt.from.Burst)
				}
				time.Sleep(tt.before)
				fake.ChangeQuota(tt.to)
				time.Sleep(tt.after)
				taken := 0
				for insert(svc, cal, 100+taken) == nil {
					taken++
				}
				if taken != tt.taken {
					t.Errorf("after the change %d writes were taken, want %d", taken, tt.taken)
				}
			})
		})
	}
}
