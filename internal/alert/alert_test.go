package alert_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/alert"
	"github.com/calsyncd/calsyncd/internal/config"
)

// The runs of a subscription's bad days, in order, and the alert each
// calls for in every format.
func TestEachEventInEachFormat(t *testing.T) {
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	s := newSetup(t, srv.Client(),
		config.Alert{URL: srv.URL + "/json"},
		config.Alert{URL: srv.URL + "/slack", Format: config.AlertSlack},
		config.Alert{URL: srv.URL + "/ntfy", Format: config.AlertNtfy})
	n := s.start(t)

	held := settled("team", calsyncd.StateActive)
	held.HeldDeletes = 27
	released := settled("team", calsyncd.StateActive)
	released.Released, released.ReleasedByOperator = 27, true
	refused := failing("team", 1)
	refused.CredentialsRefused, refused.Run.ErrorClass = calsyncd.Holds, calsyncd.ClassAuth
	refused.Run.Error = `googleauth: account default: fetch token: invalid_grant "Token has been expired or revoked." — run calsyncd auth login`
	limited := settled("team", calsyncd.StateActive)
	limited.Run.Outcome = calsyncd.OutcomeDeferred
	limited.UsageLimited, limited.UsageLimitedUntil = calsyncd.Holds, time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC)
	back := settled("team", calsyncd.StateActive)
	back.From = calsyncd.StateError
	// A reconcile held the deletes of 4 events it adopted: no lasting
	// hold (the next run said "released, nothing deleted"),
	// told as strays, once.
	strays := settled("team", calsyncd.StateActive)
	strays.HeldDeletes, strays.HeldAdopted, strays.Strays = 4, 4, calsyncd.Holds
	strays.HeldWhy = "4 are events found in Google that this database does not know it wrote"
	after := settled("team", calsyncd.StateActive)

	steps := []struct {
		name  string
		run   calsyncd.Settled
		event alert.Event // "" for none
		words []string
	}{
		{"a first failure", failing("team", 1), "", nil},
		{"the third: ERROR", failing("team", 3), alert.ErrorEntered,
			[]string{"team is in ERROR", "3 failed runs", "feed_rejected", "404 Not Found", "calsyncd sync team"}},
		{"a clean run", back, alert.ErrorCleared, []string{"team is ACTIVE again", "ended ok"}},
		{"deletes held", held, alert.DeletesHeld, []string{"27 deletes", "--allow-deletes team", "after 3 runs"}},
		{"allowed by the operator", released, alert.DeletesReleased, []string{"27 held deletes", "were made", "--allow-deletes"}},
		{"held again", held, alert.DeletesHeld, []string{"27 deletes"}},
		{"the feed came back", settled("team", calsyncd.StateActive), alert.DeletesReleased, []string{"has its events back", "nothing was deleted"}},
		{"credentials refused", refused, alert.AuthFailed, []string{"account default", "invalid_grant", "calsyncd auth login --account default"}},
		{"locked out", limited, alert.UsageLimited, []string{"account default", "usage limits", "2026-11-29T11:00:00Z"}},
		{"strays found", strays, alert.StraysLeft, []string{"4 events", "left alone", "--reconcile --allow-deletes team"}},
		{"the run after", after, "", nil},
		{"strays found again", strays, "", nil},
	}
	var want []alert.Event
	for _, st := range steps {
		n.Settled(s.at(st.run))
		if st.event != "" {
			want = append(want, st.event)
		}
	}
	flush(t, n)

	byPath := map[string][]received{}
	for _, r := range rcv.requests() {
		byPath[r.path] = append(byPath[r.path], r)
	}
	for _, path := range []string{"/json", "/slack", "/ntfy"} {
		if len(byPath[path]) != len(want) {
			t.Fatalf("%s got %d alerts, want %d (%v)", path, len(byPath[path]), len(want), want)
		}
	}
	i := 0
	for _, st := range steps {
		if st.event == "" {
			continue
		}
		checkFormats(t, st.name, st.event, st.words, s.clock.Now(), byPath["/json"][i], byPath["/slack"][i], byPath["/ntfy"][i])
		i++
	}
	if got := s.counts.get("error_entered/sent"); got != 3 {
		t.Errorf("metrics: error_entered sent %d times, want 3 (one per webhook)", got)
	}
}

// checkFormats checks one alert as each format delivered it.
func checkFormats(t *testing.T, name string, event alert.Event, words []string, at time.Time, j, sl, nt received) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(j.body, &m); err != nil || j.header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s: json body %s (%v), content type %q", name, j.body, err, j.header.Get("Content-Type"))
	}
	wantSub := "team"
	if event == alert.AuthFailed || event == alert.UsageLimited {
		wantSub = "" // an account's alert
	}
	if m["event"] != string(event) || m["subscription"] != wantSub || m["account"] != "default" || m["reminder"] != false {
		t.Errorf("%s: json %v", name, m)
	}
	if got, err := time.Parse(time.RFC3339, m["at"].(string)); err != nil || !got.Equal(at) {
		t.Errorf("%s: at %v (%v), want %s", name, m["at"], err, at)
	}
	if msg, _ := m["message"].(string); !contains([]byte(msg), words...) {
		t.Errorf("%s: message %q lacks %q", name, msg, words)
	}
	var text map[string]string
	if err := json.Unmarshal(sl.body, &text); err != nil || len(text) != 1 || !contains([]byte(text["text"]), words...) {
		t.Errorf("%s: slack body %s (%v)", name, sl.body, err)
	}
	title := nt.header.Get("Title")
	if !contains(nt.body, words...) || !strings.HasPrefix(title, "calsyncd: ") || !strings.HasPrefix(nt.header.Get("Content-Type"), "text/plain") ||
		!strings.Contains(text["text"], title) {
		t.Errorf("%s: ntfy title %q body %q", name, title, nt.body)
	}
}

// One message per transition, not per run: a condition that lasts is
// announced once, and again only as a daily reminder; what was announced
// survives a restart.
func TestOneMessagePerTransitionAndADailyReminder(t *testing.T) {
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	s := newSetup(t, srv.Client(), config.Alert{URL: srv.URL})
	events := func() []string {
		var out []string
		for _, r := range rcv.requests() {
			var m alert.Message
			json.Unmarshal(r.body, &m)
			e := string(m.Event)
			if m.Reminder {
				e += " (reminder)"
			}
			out = append(out, e)
		}
		return out
	}
	n := s.start(t)
	for errs := 1; errs <= 6; errs++ {
		n.Settled(s.at(failing("team", errs))) // ERROR from the third, at 11:00
		s.clock.Advance(time.Hour)
	}
	flush(t, n)
	if got := events(); len(got) != 1 || got[0] != "error_entered" {
		t.Fatalf("six failed runs, four of them in ERROR, sent %v; want one error_entered", got)
	}

	// A restart: a new notifier on the same memory stays quiet within the
	// day.
	n = s.start(t)
	n.Settled(s.at(failing("team", 7))) // 15:00
	s.clock.Advance(19 * time.Hour)     // 10:00 the next day: 23 h after
	n.Settled(s.at(failing("team", 8)))
	flush(t, n)
	if got := events(); len(got) != 1 {
		t.Fatalf("after a restart and within a day: %v", got)
	}

	n = s.start(t)
	s.clock.Advance(time.Hour) // a day after the announcement: remind
	n.Settled(s.at(failing("team", 9)))
	n.Settled(s.at(failing("team", 10)))
	s.clock.Advance(23 * time.Hour) // a day after the reminder, less an hour
	n.Settled(s.at(failing("team", 11)))
	s.clock.Advance(time.Hour) // a day after the reminder
	n.Settled(s.at(failing("team", 12)))
	back := settled("team", calsyncd.StateActive)
	back.From = calsyncd.StateError
	n.Settled(s.at(back))
	n.Settled(s.at(settled("team", calsyncd.StateActive)))
	flush(t, n)
	want := []string{"error_entered", "error_entered (reminder)", "error_entered (reminder)", "error_cleared"}
	if got := events(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("sent %v, want %v", got, want)
	}
	var reminder alert.Message
	json.Unmarshal(rcv.requests()[1].body, &reminder)
	if !strings.Contains(reminder.Message, "still in ERROR") || !strings.Contains(reminder.Message, "started at 2026-11-29T11:00:00Z") {
		t.Errorf("reminder: %q", reminder.Message)
	}
}

// An account's conditions are the account's, whichever subscription
// meets them; a run that cannot tell changes nothing.
func TestAccountAlertsOncePerAccount(t *testing.T) {
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	s := newSetup(t, srv.Client(), config.Alert{URL: srv.URL})
	n := s.start(t)
	for _, sub := range []string{"team", "holidays", "team"} {
		r := failing(sub, 1)
		r.CredentialsRefused = calsyncd.Holds
		n.Settled(s.at(r))
	}
	unknown := failing("holidays", 2) // the feed failed: nothing learnt
	n.Settled(s.at(unknown))
	ok := settled("team", calsyncd.StateActive)
	ok.CredentialsRefused = calsyncd.Cleared
	n.Settled(s.at(ok)) // working again: no message, but forgotten
	again := failing("holidays", 1)
	again.CredentialsRefused = calsyncd.Holds
	n.Settled(s.at(again))
	flush(t, n)
	if got := len(rcv.requests()); got != 2 {
		t.Fatalf("%d alerts, want 2: one per refusal, none for the other subscriptions or the recovery", got)
	}
}

// No webhook configured: nothing is sent and nothing remembered, so a
// webhook added later hears of a condition that is still there.
func TestNoWebhooksRememberNothing(t *testing.T) {
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	s := newSetup(t, srv.Client())
	n := s.start(t)
	n.Settled(s.at(failing("team", 3)))
	flush(t, n)
	s.cfg.Alerts = []config.Alert{{URL: srv.URL}}
	n = s.start(t)
	n.Settled(s.at(failing("team", 4)))
	flush(t, n)
	if got := rcv.requests(); len(got) != 1 || !contains(got[0].body, `"error_entered"`) {
		t.Fatalf("a webhook added while the subscription is in ERROR got %d alerts", len(got))
	}
}

// Should a run's error ever quote a secret of the configuration, the alert
// does not: feed URLs beyond their host, header values, passwords and the
// webhooks' own URLs are scrubbed from every message.
func TestASecretInARunsErrorIsScrubbed(t *testing.T) {
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	hook := srv.URL + "/hook/T0K3N-path?key=T0K3N-query"
	s := newSetup(t, srv.Client(), config.Alert{URL: hook, Format: config.AlertNtfy, Headers: map[string]string{"Authorization": "Bearer tk_T0K3N-header"}})
	s.cfg.Subscriptions = []config.Subscription{{ID: "team", URL: "https://me:T0K3N-userinfo@cal.example.com/private-T0K3N-feed/basic.ics?t=T0K3N-fq",
		Headers: map[string]string{"X-Api-Key": "T0K3N-feedheader"}, BasicAuth: &config.BasicAuth{Username: "me", Password: "T0K3N-password"}}}
	s.cfg.Status.Token = "T0K3N-status"
	n := s.start(t)
	r := failing("team", 3)
	r.Run.Error = "feed: fetching " + s.cfg.Subscriptions[0].URL + " with T0K3N-feedheader and T0K3N-password failed; posting to " + hook +
		" with Bearer tk_T0K3N-header; status T0K3N-status; path private-T0K3N-feed/basic.ics?t=T0K3N-fq"
	n.Settled(s.at(r))
	flush(t, n)
	got := rcv.requests()
	if len(got) != 1 {
		t.Fatalf("%d alerts", len(got))
	}
	if strings.Contains(string(got[0].body), "T0K3N") || strings.Contains(got[0].header.Get("Title"), "T0K3N") {
		t.Errorf("the alert holds a secret: %s", got[0].body)
	}
	if !strings.Contains(string(got[0].body), "team is in ERROR") {
		t.Errorf("scrubbing ate the message: %s", got[0].body)
	}
	if got[0].header.Get("Authorization") != "Bearer tk_T0K3N-header" {
		t.Errorf("the webhook's own header was not sent: %v", got[0].header)
	}
	if strings.Contains(s.logs.String(), "T0K3N") {
		t.Errorf("the log holds a secret:\n%s", s.logs)
	}
}
