// Package gcalwriter writes planned changes to Google Calendar without ever
// failing on a rate limit: it converts feed events to Google events marked
// as ours, paces each account's requests (Pacer), classifies Google's
// errors in one place (ClassifyAt), retries within a budget (Backoff), defers
// what Google throttles behind a per-account window it remembers across
// restarts, and persists every successful write at once through a callback.
// One Writer serves one Google account: Pool holds them.
package gcalwriter

import (
	"net/url"
	"slices"
	"strconv"
	"time"

	calendar "google.golang.org/api/calendar/v3"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// Private extended properties that mark an event as ours. Keys are at most
// 44 characters and values at most 1024 (Google's limits).
const (
	PropSubscription = "calsyncd_sub"
	// PropOwner names the installation that wrote the event
	// (calsyncd.Owner); events written before owners existed lack it.
	PropOwner        = "calsyncd_owner"
	PropUID          = "calsyncd_uid"
	PropRecurrenceID = "calsyncd_rid"
	PropHash         = "calsyncd_hash"
)

// maxPropValue is Google's limit on an extended property value.
const maxPropValue = 1024

// ToGoogle converts a feed event to the Google event we write for it: what
// Google shows of it (feed.Shown) and our marks. The id is left for the
// caller. It never sets attendees: Google would email them. An empty owner
// writes the legacy marks (no owner mark).
func ToGoogle(owner, subscriptionID string, ev *feed.Event) *calendar.Event {
	g := fromShown(ev.Shown())
	g.ExtendedProperties = &calendar.EventExtendedProperties{
		Private: map[string]string{
			PropSubscription: subscriptionID,
			PropUID:          clip(ev.UID),
			PropHash:         ev.Hash,
		},
	}
	if owner != "" {
		g.ExtendedProperties.Private[PropOwner] = owner
	}
	if ev.RecurrenceID != "" {
		g.ExtendedProperties.Private[PropRecurrenceID] = ev.RecurrenceID
	}
	return g
}

// fromShown is Google's form of what an event shows.
func fromShown(s feed.Shown) *calendar.Event {
	g := &calendar.Event{
		Summary:      s.Summary,
		Description:  s.Description,
		Location:     s.Location,
		Start:        eventTime(s.Start),
		End:          eventTime(s.End),
		Status:       s.Status,
		Transparency: s.Transparency,
		Visibility:   s.Visibility,
		Recurrence:   s.Recurrence,
		ColorId:      s.ColorID,
		Reminders:    reminders(s.Reminders),
	}
	if u, err := url.Parse(s.URL); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		title := s.Summary
		if title == "" {
			title = u.Host
		}
		g.Source = &calendar.EventSource{Title: title, Url: s.URL}
	}
	if g.Status == "" {
		g.Status = feed.StatusConfirmed
	}
	// Google requires a time zone on recurring timed events; a UTC series is
	// expanded in UTC.
	if s.IsRecurring() && !s.Start.AllDay {
		if g.Start.TimeZone == "" {
			g.Start.TimeZone = "UTC"
		}
		if g.End.TimeZone == "" {
			g.End.TimeZone = g.Start.TimeZone
		}
	}
	return g
}

func eventTime(t feed.Time) *calendar.EventDateTime {
	if t.AllDay {
		return &calendar.EventDateTime{Date: t.Date()}
	}
	dt := &calendar.EventDateTime{}
	if t.Zone != "" {
		if loc, err := time.LoadLocation(t.Zone); err == nil {
			dt.DateTime = t.T.In(loc).Format(time.RFC3339)
			dt.TimeZone = t.Zone
			return dt
		}
	}
	dt.DateTime = t.T.UTC().Format(time.RFC3339)
	return dt
}

func clip(s string) string {
	if len(s) <= maxPropValue {
		return s
	}
	// Cut on a rune boundary.
	cut := maxPropValue
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Owned reports whether a Google event carries our marks for the
// subscription: the subscription's id and an owner mark the owner
// recognises (none, for events written before owners existed). Events
// without marks belong to a person, events with another owner's mark to
// another installation; neither is ever touched.
func Owned(ev *calendar.Event, o calsyncd.Owner, subscriptionID string) bool {
	sub, owner, ok := Marks(ev)
	return ok && sub == subscriptionID && o.Recognises(owner)
}

// Marks reads the subscription and owner marks of a Google event, whoever
// wrote it; ok is false when it carries no subscription mark.
func Marks(ev *calendar.Event) (subscriptionID, owner string, ok bool) {
	if ev.ExtendedProperties == nil {
		return "", "", false
	}
	p := ev.ExtendedProperties.Private
	return p[PropSubscription], p[PropOwner], p[PropSubscription] != ""
}

// OwnedHash is the content hash we stamped on an event we wrote.
func OwnedHash(ev *calendar.Event) string {
	if ev.ExtendedProperties == nil {
		return ""
	}
	return ev.ExtendedProperties.Private[PropHash]
}

func ownerMark(ev *calendar.Event) string {
	_, owner, _ := Marks(ev)
	return owner
}

// reminders is Google's form of a subscription's reminders (nil: the
// subscription leaves them alone). useDefault is always sent: false is
// what "none" and a list mean.
func reminders(r *feed.Reminders) *calendar.EventReminders {
	if r == nil {
		return nil
	}
	out := &calendar.EventReminders{UseDefault: r.UseDefault, ForceSendFields: []string{"UseDefault"}}
	for _, o := range r.Overrides {
		out.Overrides = append(out.Overrides, &calendar.EventReminder{Method: o.Method, Minutes: int64(o.Minutes), ForceSendFields: []string{"Minutes"}})
	}
	return out
}

// personalFields copies what a person may have set on our event (their own
// reminders and colour) into the event we are about to write, so a feed
// update does not undo them — unless the subscription sets that field
// itself (color, reminders): then ours win.
func personalFields(dst, theirs *calendar.Event) {
	if theirs.Reminders != nil && dst.Reminders == nil {
		dst.Reminders = theirs.Reminders
	}
	if theirs.ColorId != "" && dst.ColorId == "" {
		dst.ColorId = theirs.ColorId
	}
}

// SameContent reports whether Google's copy of an event shows what we would
// write: our content stamp and every field a person sees. Google may
// normalise what it stores (a UTC offset, a default transparency), so times
// compare as instants and defaults as their values. When in doubt it says
// "different": one update too many costs a quota unit, a stale event stays
// wrong.
func SameContent(want, got *calendar.Event) bool {
	return OwnedHash(got) == OwnedHash(want) && ownerMark(got) == ownerMark(want) &&
		got.Summary == want.Summary && got.Description == want.Description && got.Location == want.Location &&
		sameTime(want.Start, got.Start) && sameTime(want.End, got.End) &&
		slices.Equal(want.Recurrence, got.Recurrence) &&
		or(got.Status, "confirmed") == or(want.Status, "confirmed") &&
		or(got.Transparency, "opaque") == or(want.Transparency, "opaque") &&
		or(got.Visibility, "default") == or(want.Visibility, "default") &&
		sameSource(want.Source, got.Source) &&
		(want.ColorId == "" || got.ColorId == want.ColorId) &&
		(want.Reminders == nil || sameReminders(want.Reminders, got.Reminders))
}

// sameReminders: the same default flag and overrides, in any order.
func sameReminders(want, got *calendar.EventReminders) bool {
	if got == nil {
		return false
	}
	key := func(rs []*calendar.EventReminder) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.Method + ":" + strconv.FormatInt(r.Minutes, 10)
		}
		slices.Sort(out)
		return out
	}
	return want.UseDefault == got.UseDefault && slices.Equal(key(want.Overrides), key(got.Overrides))
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func sameTime(want, got *calendar.EventDateTime) bool {
	if want == nil || got == nil {
		return want == got
	}
	if want.Date != got.Date {
		return false
	}
	if want.TimeZone != "" && want.TimeZone != got.TimeZone {
		return false
	}
	if want.DateTime == got.DateTime {
		return true
	}
	a, err1 := time.Parse(time.RFC3339, want.DateTime)
	b, err2 := time.Parse(time.RFC3339, got.DateTime)
	return err1 == nil && err2 == nil && a.Equal(b)
}

func sameSource(want, got *calendar.EventSource) bool {
	if want == nil || got == nil {
		return want == nil && got == nil
	}
	return want.Url == got.Url && want.Title == got.Title
}
