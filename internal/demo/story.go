package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/gcalfake"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// Story is the demo's narrative, told through real syncs.
type Story struct {
	Log   *slog.Logger
	Fake  *gcalfake.Server
	Feeds *Feeds
	// Subscriptions are named after their feeds (team for team.ics).
	Subscriptions []config.Subscription
	// Sync runs one subscription now.
	Sync func(ctx context.Context, sub config.Subscription) (subscription.Report, error)
	// ThrottledUntil is when the default account's throttle window closes
	// (zero when none is open).
	ThrottledUntil func() time.Time
}

func (s *Story) sub(id string) (config.Subscription, error) {
	for _, sub := range s.Subscriptions {
		if sub.ID == id {
			return sub, nil
		}
	}
	return config.Subscription{}, fmt.Errorf("demo: no subscription %s", id)
}

// sync runs a subscription, waiting out a scheduled run of it.
func (s *Story) sync(ctx context.Context, id string) (calsyncd.Run, error) {
	sub, err := s.sub(id)
	if err != nil {
		return calsyncd.Run{}, err
	}
	for {
		rep, err := s.Sync(ctx, sub)
		if errors.Is(err, subscription.ErrBusy) {
			if err := sleep(ctx, 200*time.Millisecond); err != nil {
				return calsyncd.Run{}, err
			}
			continue
		}
		if err != nil {
			return calsyncd.Run{}, err
		}
		if rep.State != calsyncd.StateActive {
			return rep.Run, fmt.Errorf("demo: %s is %s after its run (%v)", id, rep.State, rep.Err)
		}
		return rep.Run, nil
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *Story) say(step, msg string, attrs ...any) {
	s.Log.Info("demo: "+msg, append([]any{"demo_step", step}, attrs...)...)
}

func runAttrs(r calsyncd.Run) []any {
	return []any{"outcome", r.Outcome, "created", r.Created, "updated", r.Updated, "deleted", r.Deleted,
		"unchanged", r.Unchanged, "deferred", r.Deferred}
}

// Run tells the story: the first sync of every feed; a change to the team
// feed and the second sync, which writes exactly the changed events; a
// burst of changes that Google's rate limit (the emulator's) partly refuses,
// deferred without an error; and the next run picking the rest up.
func (s *Story) Run(ctx context.Context) error {
	s.say("first_sync", "first sync: every event of every feed is created (large feeds log their progress)")
	first := map[string]calsyncd.Run{}
	for _, sub := range s.Subscriptions {
		r, err := s.sync(ctx, sub.ID)
		if err != nil {
			return err
		}
		first[sub.ID] = r
		s.say("first_sync", fmt.Sprintf("%s: %d events written to %s", sub.ID, r.Created, sub.Calendar),
			append([]any{"subscription", sub.ID}, runAttrs(r)...)...)
	}
	team, err := s.sub("team")
	if err != nil {
		return err
	}
	if err := s.weeklySync(team); err != nil {
		return err
	}
	if community, err := s.sub("community"); err == nil {
		if err := s.filtered(community, first[community.ID]); err != nil {
			return err
		}
	}
	if err := s.change(ctx, team); err != nil {
		return err
	}
	return s.rateLimit(ctx)
}

// change edits the team feed and checks that the second sync writes
// exactly what changed, and nothing for the untouched feeds.
func (s *Story) change(ctx context.Context, team config.Subscription) error {
	party := s.Feeds.Date(17).Format("20060102")
	err := s.Feeds.Edit("team.ics", func(b string) string {
		b = strings.Replace(b, "SUMMARY:Sprint retrospective", "SUMMARY:Sprint retrospective (moved online)", 1)
		b = removeEvent(b, "UID:oncall-handover-2027-02@example.com")
		return strings.Replace(b, "END:VCALENDAR", "BEGIN:VEVENT\r\nUID:party-2026@example.com\r\nDTSTAMP:20261201T090000Z\r\n"+
			"DTSTART;TZID=Europe/Berlin:"+party+"T180000\r\nDTEND;TZID=Europe/Berlin:"+party+"T230000\r\n"+
			"SUMMARY:Team holiday party\r\nLOCATION:Kantine\r\nEND:VEVENT\r\nEND:VCALENDAR", 1)
	})
	if err != nil {
		return err
	}
	s.say("change", "the team feed changes: one event renamed, one removed, one added; the other feeds are untouched")
	for _, sub := range s.Subscriptions {
		r, err := s.sync(ctx, sub.ID)
		if err != nil {
			return err
		}
		s.say("second_sync", "second sync of "+sub.ID, append([]any{"subscription", sub.ID}, runAttrs(r)...)...)
		if sub.ID == team.ID && (r.Created != 1 || r.Updated != 1 || r.Deleted != 1) {
			return fmt.Errorf("demo: the team feed's second sync wrote %d/%d/%d (created/updated/deleted), want 1/1/1", r.Created, r.Updated, r.Deleted)
		}
		if sub.ID != team.ID && r.Created+r.Updated+r.Deleted != 0 {
			return fmt.Errorf("demo: the unchanged feed %s cost %d writes", sub.ID, r.Created+r.Updated+r.Deleted)
		}
	}
	return nil
}

// rateLimit renames holidays while Google's per-user quota runs dry (the
// emulator allows a write every two seconds): part of the writes are
// deferred without an error, and the next run picks the rest up.
func (s *Story) rateLimit(ctx context.Context) error {
	s.Fake.SetQuota(gcalfake.Quota{Rate: 0.5, Burst: 2, Mode: gcalfake.RateLimit403})
	renamed := 0
	err := s.Feeds.Edit("holidays.ics", func(b string) string {
		renamed = strings.Count(b, " (US)\r\n")
		return strings.ReplaceAll(b, " (US)\r\n", " (USA)\r\n")
	})
	if err != nil {
		return err
	}
	s.say("rate_limit_burst", fmt.Sprintf("%d holidays are renamed while the emulator allows one write every two seconds", renamed))
	r, err := s.sync(ctx, "holidays")
	if err != nil {
		return err
	}
	if r.Outcome != calsyncd.OutcomeDeferred || r.Deferred == 0 {
		return fmt.Errorf("demo: the rate-limited sync ended %s with %d deferred, want deferred writes", r.Outcome, r.Deferred)
	}
	s.say("deferred", fmt.Sprintf("Google refused some writes: %d written, %d deferred to the next run; the subscription stays ACTIVE", r.Updated, r.Deferred),
		append([]any{"subscription", "holidays", "state", calsyncd.StateActive}, runAttrs(r)...)...)

	s.Fake.SetQuota(gcalfake.Quota{})
	if until := s.ThrottledUntil(); !until.IsZero() {
		wait := time.Until(until) + 100*time.Millisecond
		s.say("waiting", fmt.Sprintf("the account's throttle window is open for %s: no request goes to Google until it closes", wait.Round(100*time.Millisecond)))
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
	r2, err := s.sync(ctx, "holidays")
	if err != nil {
		return err
	}
	if r2.Deferred != 0 || r.Updated+r2.Updated != renamed {
		return fmt.Errorf("demo: the recovery run ended %s with %d updated and %d deferred, want the %d left", r2.Outcome, r2.Updated, r2.Deferred, renamed-r.Updated)
	}
	s.say("recovery", fmt.Sprintf("the next run picked up the %d deferred writes; nothing was lost or duplicated", r2.Updated),
		append([]any{"subscription", "holidays", "state", calsyncd.StateActive}, runAttrs(r2)...)...)
	return nil
}

// weeklySync tells (and checks) how the team's weekly meeting looks in
// Google: one recurring event, its instance of the 21st moved to Tuesday
// the 22nd, the one of the 28th cancelled (the sample feed's dates, moved
// to the present).
func (s *Story) weeklySync(team config.Subscription) error {
	first, moved, cancelled := s.Feeds.Date(7), s.Feeds.Date(22), s.Feeds.Date(28)
	var n int
	var movedSeen, cancelledSeen bool
	for _, o := range s.Fake.Agenda(team.Calendar, first, first.AddDate(0, 7, 0)) {
		if !strings.HasPrefix(o.Summary, "Team sync") {
			continue
		}
		n++
		day := o.Start.UTC().Truncate(24 * time.Hour)
		movedSeen = movedSeen || (day.Equal(moved) && o.Summary == "Team sync (moved to Tuesday)")
		cancelledSeen = cancelledSeen || day.Equal(cancelled)
	}
	if n != 25 || !movedSeen || cancelledSeen {
		return fmt.Errorf("demo: the weekly team sync shows %d times (moved instance seen: %v, cancelled instance seen: %v), want 25, true, false",
			n, movedSeen, cancelledSeen)
	}
	s.say("first_sync", fmt.Sprintf("team: the weekly \"Team sync\" is one recurring event in Google: %d meetings from %s, the one of %s moved to Tuesday %s, the one of %s cancelled",
		n, first.Format("Mon 2 Jan"), moved.AddDate(0, 0, -1).Format("Mon 2 Jan"), moved.Format("2 Jan"), cancelled.Format("Mon 2 Jan")))
	return nil
}

// removeEvent cuts the VEVENT containing marker out of an ICS body.
func removeEvent(body, marker string) string {
	i := strings.Index(body, marker)
	if i < 0 {
		return body
	}
	start := strings.LastIndex(body[:i], "BEGIN:VEVENT")
	end := strings.Index(body[i:], "END:VEVENT")
	if start < 0 || end < 0 {
		return body
	}
	end += i + len("END:VEVENT")
	for end < len(body) && (body[end] == '\r' || body[end] == '\n') {
		end++
	}
	return body[:start] + body[end:]
}

// CommunityTitle and CommunityColor are how the demo presents the
// community feed: only its meetups and conferences, none called off,
// prefixed and coloured peacock (Google's colour 7).
const (
	CommunityTitle = "[Go] {summary}"
	CommunityColor = "peacock"
)

// filtered tells (and checks) what the community feed's filters and
// presentation made of it: the kept events only, each prefixed and
// coloured.
func (s *Story) filtered(community config.Subscription, r calsyncd.Run) error {
	var shown []string
	for _, ev := range s.Fake.Events(community.Calendar) {
		if ev.Status == "cancelled" {
			continue
		}
		if !strings.HasPrefix(ev.Summary, "[Go] ") || ev.ColorId != "7" {
			return fmt.Errorf("demo: the community event %q has colour %q, want the [Go] prefix and peacock (7)", ev.Summary, ev.ColorId)
		}
		shown = append(shown, ev.Summary)
	}
	if len(shown) != 3 || r.Filtered != 4 {
		return fmt.Errorf("demo: the community calendar shows %q with %d events filtered out, want 3 shown and 4 out", shown, r.Filtered)
	}
	s.say("filters", fmt.Sprintf("community: its filters keep %d of the feed's events (meetups and conferences, none called off) and leave out %d; Google shows them as %q, coloured %s",
		len(shown), r.Filtered, shown, CommunityColor), "subscription", community.ID, "filtered", r.Filtered)
	return nil
}
