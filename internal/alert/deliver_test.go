package alert_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
)

// A receiver that is down: each alert is tried again with doubling waits,
// then given up with a log line, and the runs handing it over never wait.
func TestReceiverDownRetriesWithBackoffThenGivesUp(t *testing.T) {
	tests := map[string]struct {
		rcv      *receiver
		client   func(*receiver) *http.Client
		attempts int
		gaps     []time.Duration
		sent     bool
	}{
		"answers 503": {rcv: &receiver{status: http.StatusServiceUnavailable}, attempts: 6,
			gaps: []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second}},
		"back after two failures": {rcv: &receiver{failFirst: 2}, attempts: 3, sent: true,
			gaps: []time.Duration{2 * time.Second, 4 * time.Second}},
		"refuses it for good (404)": {rcv: &receiver{status: http.StatusNotFound}, attempts: 1},
		"not listening": {rcv: &receiver{}, attempts: 6,
			client: func(r *receiver) *http.Client {
				return &http.Client{Transport: roundTripper(func(req *http.Request) (*http.Response, error) {
					r.ServeHTTP(discard{}, req) // count the attempt
					return nil, errors.New("dial tcp 127.0.0.1:9: connect: connection refused")
				})}
			}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				client := handlerClient(tt.rcv)
				if tt.client != nil {
					client = tt.client(tt.rcv)
				}
				s := newSetup(t, client, config.Alert{URL: "https://hooks.example.com/services/T0/B0/s3cretkey"})
				s.clock.t = time.Now()
				n := s.start(t)
				start := time.Now()
				n.Settled(s.at(failing("team", 3)))
				if time.Since(start) != 0 {
					t.Fatal("Settled waited")
				}
				flush(t, n)
				got := tt.rcv.requests()
				if len(got) != tt.attempts {
					t.Fatalf("%d attempts, want %d", len(got), tt.attempts)
				}
				for i, want := range tt.gaps {
					if gap := got[i+1].at.Sub(got[i].at); gap != want {
						t.Errorf("wait before attempt %d: %s, want %s", i+2, gap, want)
					}
				}
				logs := s.logs.String()
				if tt.sent {
					if !strings.Contains(logs, "alert sent") || s.counts.get("error_entered/sent") != 1 {
						t.Errorf("no alert sent line or metric:\n%s", logs)
					}
					return
				}
				if !strings.Contains(logs, "alert not delivered; giving up") || s.counts.get("error_entered/failed") != 1 {
					t.Errorf("no giving-up line or metric:\n%s", logs)
				}
				if strings.Contains(logs, "s3cretkey") || strings.Contains(logs, "/services/") {
					t.Errorf("the webhook's URL reached the log:\n%s", logs)
				}
				if !strings.Contains(logs, "webhook=https://hooks.example.com/…") {
					t.Errorf("the log does not name the webhook by scheme and host:\n%s", logs)
				}
			})
		})
	}
}

// The receiver's Retry-After is a floor for the next wait.
func TestRetryAfterIsAFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var at []time.Time
		client := handlerClient(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			at = append(at, time.Now())
			if len(at) == 1 {
				w.Header().Set("Retry-After", "90")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		}))
		s := newSetup(t, client, config.Alert{URL: "https://hooks.example.com/x"})
		n := s.start(t)
		n.Settled(s.at(failing("team", 3)))
		flush(t, n)
		if len(at) != 2 || at[1].Sub(at[0]) != 90*time.Second {
			t.Fatalf("attempts at %v, want two, 90s apart", at)
		}
	})
}

// A receiver that hangs fills its queue; runs go on handing theirs over at
// once, the overflow is dropped with a log line, and shutdown does not wait
// past its deadline.
func TestAHangingReceiverNeverHoldsUpRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var mu sync.Mutex
		served := 0
		client := handlerClient(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			served++
			mu.Unlock()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		s := newSetup(t, client, config.Alert{URL: "https://hooks.example.com/x"})
		s.o.QueueSize = 4
		n := s.start(t)
		start := time.Now()
		for i := range 40 {
			// Each run a new subscription entering ERROR: 40 alerts.
			n.Settled(s.at(failing("sub"+string(rune('a'+i%26))+string(rune('a'+i/26)), 3)))
			synctest.Wait()
		}
		if time.Since(start) != 0 {
			t.Fatal("handing runs over waited")
		}
		if s.counts.get("error_entered/dropped") == 0 || !strings.Contains(s.logs.String(), "queue is full") {
			t.Fatalf("a full queue dropped nothing:\n%s", s.logs)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := n.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Close = %v, want its deadline", err)
		}
		if time.Since(start) != 5*time.Second {
			t.Errorf("Close took %s, want its 5s deadline", time.Since(start))
		}
		if !strings.Contains(s.logs.String(), "shutting down; alert not delivered") {
			t.Errorf("alerts left at shutdown are not logged:\n%s", s.logs)
		}
		close(release)
		if served != 1 {
			t.Errorf("the hanging receiver was sent %d requests, want 1", served)
		}
	})
}

type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}

// An alert no webhook took is not remembered as sent: the next run that
// sees the condition sends it again, once (it waited
// for the daily reminder).
func TestAnUndeliveredAlertIsSentAgainByTheNextRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rcv := &receiver{status: http.StatusServiceUnavailable}
		s := newSetup(t, handlerClient(rcv), config.Alert{URL: "https://hooks.example.com/x"})
		s.clock.t = time.Now()
		n := s.start(t)
		n.Settled(s.at(failing("team", 3)))
		time.Sleep(10 * time.Minute) // every retry given up
		synctest.Wait()
		if got := n.Undelivered(); got != 1 {
			t.Fatalf("Undelivered = %d, want 1", got)
		}
		// Status learns of it from the store, until a message is delivered.
		u := calsyncd.UndeliveredAlert("error", "team")
		if st, ok, _ := s.mem.AlertState(t.Context(), u.Condition, u.Subject); !ok || st.Since.IsZero() {
			t.Errorf("the undelivered alert is not remembered for status: %+v %v", st, ok)
		}
		rcv.mu.Lock()
		rcv.status = 0
		rcv.mu.Unlock()
		before := len(rcv.requests())
		n.Settled(s.at(failing("team", 4)))
		n.Settled(s.at(failing("team", 5)))
		flush(t, n)
		if got := len(rcv.requests()) - before; got != 1 {
			t.Errorf("after the webhook came back, %d requests, want the alert sent once", got)
		}
		if s.counts.get("error_entered/sent") != 1 {
			t.Errorf("error_entered sent %d times, want 1", s.counts.get("error_entered/sent"))
		}
		if _, ok, _ := s.mem.AlertState(t.Context(), u.Condition, u.Subject); ok {
			t.Errorf("status still says the alert was not delivered after it was")
		}
	})
}
