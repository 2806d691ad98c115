package alert_test

import (
	"net/http"
	"strings"
	"testing"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// TestFeedThrottledForADay: a feed server answering every fetch with 429
// keeps the subscription ACTIVE (a rate limit is no failure), but after a
// day the status says so and feed_throttled is sent, then reminded of
// daily; a feed that answers again ends it without a message (a feed
// must not defer forever without a word).
func TestFeedThrottledForADay(t *testing.T) {
	w := newWorld(t)
	w.sync(subscription.Options{})
	w.setFeed(http.StatusTooManyRequests, nil)
	note := func() string {
		st, err := w.store.Subscription(t.Context(), "team")
		if err != nil {
			t.Fatal(err)
		}
		if st.State != calsyncd.StateActive {
			t.Fatalf("state %s, want ACTIVE", st.State)
		}
		return strings.Join(st.Notes, "\n")
	}
	for h := 0; h < 24; h++ { // runs an hour apart, 23 h of 429s
		if rep := w.sync(subscription.Options{}); rep.Run.Outcome != calsyncd.OutcomeDeferred {
			t.Fatalf("hour %d: outcome %s, want deferred", h, rep.Run.Outcome)
		}
	}
	if strings.Contains(note(), "429") {
		t.Fatalf("noted before a day of 429s: %s", note())
	}
	if got := w.alerts(); len(got) != 0 {
		t.Fatalf("alerts before a day: %v", got)
	}
	w.sync(subscription.Options{}) // 24 h after the first 429
	if !strings.Contains(note(), "answered every fetch with 429") {
		t.Errorf("no status note after a day of 429s: %q", note())
	}
	if got := w.alerts(); strings.Join(got, ",") != "feed_throttled" {
		t.Fatalf("alerts after a day: %v, want feed_throttled", got)
	}
	msg := string(w.rcv.requests()[0].body)
	if !strings.Contains(msg, "429") || !strings.Contains(msg, "ACTIVE") {
		t.Errorf("message %s", msg)
	}
	for range 24 {
		w.sync(subscription.Options{})
	}
	if got := w.alerts(); strings.Join(got, ",") != "feed_throttled,feed_throttled (reminder)" {
		t.Fatalf("alerts after two days: %v", got)
	}
	w.setFeed(0, weeklyFeed(30))
	if rep := w.sync(subscription.Options{}); rep.Run.Outcome == calsyncd.OutcomeDeferred {
		t.Fatalf("the feed answers again, the run is %s", rep.Run.Outcome)
	}
	if strings.Contains(note(), "429") {
		t.Errorf("the note stayed after the feed answered: %q", note())
	}
	w.setFeed(http.StatusTooManyRequests, nil)
	w.sync(subscription.Options{})
	if got := w.alerts(); len(got) != 2 {
		t.Errorf("a new streak was announced at once: %v", got)
	}
}
