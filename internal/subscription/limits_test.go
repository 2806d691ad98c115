package subscription_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
)

// secondlyFeed is a feed of the given weekly events plus `series` series
// of one-second events repeating every second from tomorrow: Google holds
// no series more frequent than daily, so each is written as single
// events, 1,000 per series.
func secondlyFeed(weekly, series int) []byte {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\n")
	if weekly > 0 {
		body := string(weeklyFeed(weekly))
		b.WriteString(body[strings.Index(body, "BEGIN:VEVENT"):strings.LastIndex(body, "END:VCALENDAR")])
	}
	start := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Hour)
	for i := range series {
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:s%d\r\nDTSTART:%s\r\nDURATION:PT1S\r\nRRULE:FREQ=SECONDLY\r\nSUMMARY:s\r\nEND:VEVENT\r\n",
			i, start.Format("20060102T150405Z"))
	}
	b.WriteString("END:VCALENDAR\r\n")
	return []byte(b.String())
}

// TestCostLimits: a feed over its subscription's limits is refused whole
// (a failed run, class feed_over_limit, a status note): nothing is written
// and nothing already mirrored is deleted (one FREQ=SECONDLY
// series became 1,000 writes, ten of them in 1.5 KB 10,000).
func TestCostLimits(t *testing.T) {
	tests := []struct {
		name   string
		feed   []byte
		limits *config.Limits // the subscription's own; nil: the defaults
		says   string
	}{
		{"ten FREQ=SECONDLY series, default limits", secondlyFeed(0, 10), nil, "more than 5000 occurrences written as single events (limits.max_instances_expanded)"},
		{"one FREQ=SECONDLY series, the subscription's limit", secondlyFeed(0, 1), &config.Limits{MaxInstancesExpanded: 500}, "more than 500 occurrences written as single events (limits.max_instances_expanded)"},
		{"too many events", weeklyFeed(60), &config.Limits{MaxEvents: 50}, "more than 50 events (limits.max_events)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, "")
			h.cfg.Subscriptions[0].Limits = tt.limits
			h.setFeed(weeklyFeed(30))
			if rep := h.sync(); rep.Run.Created != 30 {
				t.Fatalf("first sync created %d", rep.Run.Created)
			}
			before := totalWrites(h.writes())
			h.setFeed(tt.feed)
			rep := h.sync()
			if rep.Run.Outcome != calsyncd.OutcomeFailed || rep.Run.ErrorClass != calsyncd.ClassFeedOverLimit || !strings.Contains(rep.Run.Error, tt.says) {
				t.Fatalf("run: %s %s %q, want failed, feed_over_limit, saying %q", rep.Run.Outcome, rep.Run.ErrorClass, rep.Run.Error, tt.says)
			}
			if w := totalWrites(h.writes()) - before; w != 0 {
				t.Errorf("%d writes to Google, want none", w)
			}
			if got := len(h.fake.Events(testCalendar)); got != 30 {
				t.Errorf("calendar holds %d events, want the 30 mirrored before", got)
			}
			st, _ := h.store.Subscription(t.Context(), "team")
			if len(st.Notes) == 0 || !strings.Contains(strings.Join(st.Notes, "\n"), tt.says) || st.ETag != "" || st.BodyHash == string(tt.feed) {
				t.Errorf("state after the refusal: notes %q, validators kept %q", st.Notes, st.ETag+st.BodyHash)
			}
			t.Logf("%d bytes of feed: %s", len(tt.feed), rep.Run.Error)
			// Once the feed is back within its limits, the note goes.
			h.setFeed(weeklyFeed(30))
			if rep := h.sync(); rep.Run.Outcome != calsyncd.OutcomeOK {
				t.Fatalf("back within the limits: %s %s", rep.Run.Outcome, rep.Run.Error)
			}
			if st, _ := h.store.Subscription(t.Context(), "team"); len(st.Notes) != 0 {
				t.Errorf("the note stayed: %q", st.Notes)
			}
		})
	}
}

// TestTenSecondlySeriesFitInOnePointFiveKilobytes pins the issue's
// figure: the hostile feed is tiny.
func TestTenSecondlySeriesFitInOnePointFiveKilobytes(t *testing.T) {
	if n := len(secondlyFeed(0, 10)); n > 1536 {
		t.Errorf("the feed is %d bytes", n)
	}
}

// TestRaisedLimitLetsTheFeedThrough: a subscription whose feed is genuine
// raises its own limit and is mirrored in full.
func TestRaisedLimitLetsTheFeedThrough(t *testing.T) {
	h := newHarness(t, "")
	h.cfg.Limits.MaxInstancesExpanded = 500
	h.cfg.Subscriptions[0].Limits = &config.Limits{MaxInstancesExpanded: 1000}
	h.setFeed(secondlyFeed(2, 1))
	if rep := h.sync(); rep.Run.Outcome != calsyncd.OutcomeOK || rep.Run.Created != 1002 {
		t.Fatalf("run: %s, created %d, %s", rep.Run.Outcome, rep.Run.Created, rep.Run.Error)
	}
}
