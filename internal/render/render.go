package render

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/calsyncd/calsyncd/internal/feed"
)

// Context is what a title template may name beyond the event.
type Context struct {
	// Subscription is the subscription's id.
	Subscription string
	// CalendarName is the feed's X-WR-CALNAME.
	CalendarName string
	// FilterBudget bounds the time matching filters may take
	// (0: DefaultFilterBudget); Clock reads the time (nil: time.Now).
	FilterBudget time.Duration
	Clock        func() time.Time
}

// Result is the render stage's output.
type Result struct {
	// Events are what Google should show, in the order given (sorted by
	// key, as the parser gives them).
	Events []feed.Event
	// Excluded are the events the filters took out, as the feed has them:
	// series (their overrides go along) and single events left out, and
	// overrides of kept series an exclude turned into cancelled
	// instances.
	Excluded []feed.Event
	// Why says, for each of Excluded (the same index), which filters left
	// it out.
	Why []Exclusion
	// Skipped counts the feed's alarms reminders: feed could not mirror.
	Skipped SkippedAlarms
}

// Exclusion is why the filters left an event out: the exclude that
// matched it, or, when none did, the includes it matched none of.
type Exclusion struct {
	// Rule is the index in Policy.Filters of the first exclude that
	// matched; -1 when no exclude did and the event matched no include.
	Rule int
	// Includes are the indexes in Policy.Filters of the includes, when
	// no include matched (Rule -1).
	Includes []int
}

// Explain says an exclusion in the configuration's words, prefix naming
// the filters' key ("filters" or "defaults.filters"):
// `filters[1] exclude.summary matched "^On-call"`, or `no include matched
// (filters[0] include.categories "^DE$")`.
func (p *Policy) Explain(x Exclusion, prefix string) string {
	rule := func(i int, verb string) string {
		if i < 0 || i >= len(p.Filters) {
			return fmt.Sprintf("%s[%d]", prefix, i)
		}
		r := p.Filters[i]
		kind := "include"
		if r.Exclude {
			kind = "exclude"
		}
		return fmt.Sprintf("%s[%d] %s.%s %s%s", prefix, i, kind, r.Field, verb, strconv.Quote(r.Pattern.String()))
	}
	if x.Rule >= 0 {
		return rule(x.Rule, "matched ")
	}
	parts := make([]string, len(x.Includes))
	for j, i := range x.Includes {
		parts[j] = rule(i, "")
	}
	return "no include matched (" + strings.Join(parts, "; ") + ")"
}

// SkippedAlarms counts VALARMs that reminders: feed left out, by why.
type SkippedAlarms struct {
	// Absolute: an absolute trigger (Google's reminders are relative).
	Absolute int
	// AfterStart: a trigger after the event's start.
	AfterStart int
	// TooEarly: more than 4 weeks before the start.
	TooEarly int
	// Action: neither DISPLAY, AUDIO nor EMAIL.
	Action int
	// OverLimit: beyond Google's 5 reminders per event.
	OverLimit int
}

// Total is every alarm skipped.
func (s SkippedAlarms) Total() int {
	return s.Absolute + s.AfterStart + s.TooEarly + s.Action + s.OverLimit
}

// Note is the standing remark on the subscription when alarms were
// skipped ("" when none were): NotePrefix and the counts.
func (s SkippedAlarms) Note() string {
	if s.Total() == 0 {
		return ""
	}
	var why []string
	for _, c := range []struct {
		n    int
		what string
	}{{s.Absolute, "with an absolute trigger"}, {s.AfterStart, "ringing after the start"},
		{s.TooEarly, "more than 4 weeks before the start"}, {s.Action, "neither DISPLAY, AUDIO nor EMAIL"},
		{s.OverLimit, "beyond Google's 5 reminders per event"}} {
		if c.n > 0 {
			why = append(why, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return fmt.Sprintf("%s%d of the feed's alarms are not mirrored as Google reminders: %s", NotePrefix, s.Total(), strings.Join(why, ", "))
}

// NotePrefix starts the subscription's note on skipped alarms.
const NotePrefix = "reminders: feed: "

// Render applies the policy to the parsed events (sorted by key, as the
// parser gives them). A filter decides a series by its master: a series
// left out takes its overrides along, a kept series keeps them, and an
// override of a kept series that itself matches an exclude becomes a
// cancelled instance. An override whose series is not in the feed is
// decided on its own. Cancelled events show nothing, so they get no title,
// colour, reminders, visibility or transparency; privacy: busy strips
// them too. Whatever the policy, the text every event shows is held to
// Google's caps (MaxSummary and the others) with its control characters
// left out. The events' hashes are those of what they show now.
//
// Matching filters may take c.FilterBudget: past it the render fails with
// a *FilterBudgetError naming the costliest filter, and no Result.
func Render(events []feed.Event, p *Policy, c Context) (Result, error) {
	if p.IsZero() {
		return Result{Events: limitAll(events)}, nil
	}
	m := newMeter(p, c)
	res := Result{Events: make([]feed.Event, 0, len(events))}
	masterKept := map[string]bool{}
	for i := range events {
		if err := m.over(p, i, len(events)); err != nil {
			return Result{}, err
		}
		ev := events[i]
		if ev.RecurrenceID == "" {
			keep, why := p.keepsWhy(&ev, m)
			masterKept[ev.UID] = keep
			if !keep {
				res.Excluded, res.Why = append(res.Excluded, ev), append(res.Why, why)
				continue
			}
		} else if kept, hasMaster := masterKept[ev.UID]; hasMaster {
			if !kept {
				continue // left out with its series
			}
			if rule := p.excludes(&ev, m); rule >= 0 && ev.Status != feed.StatusCancelled {
				res.Excluded, res.Why = append(res.Excluded, ev), append(res.Why, Exclusion{Rule: rule})
				ev.Status = feed.StatusCancelled
			}
		} else if keep, why := p.keepsWhy(&ev, m); !keep {
			res.Excluded, res.Why = append(res.Excluded, ev), append(res.Why, why)
			continue
		}
		p.present(&ev, c, &res.Skipped)
		limitText(&ev)
		ev.Hash = ev.ComputeHash()
		res.Events = append(res.Events, ev)
	}
	if err := m.over(p, len(events), len(events)); err != nil {
		return Result{}, err
	}
	return res, nil
}

// limitAll is the events with limitText applied: events itself when no
// event needs it, else a copy (the caller's events are left alone).
func limitAll(events []feed.Event) []feed.Event {
	var out []feed.Event
	for i := range events {
		ev := events[i]
		if !limitText(&ev) {
			continue
		}
		if out == nil {
			out = slices.Clone(events)
		}
		ev.Hash = ev.ComputeHash()
		out[i] = ev
	}
	if out == nil {
		return events
	}
	return out
}

// keepsWhy reports whether the filters let an event through: it matches
// at least one include (when there is one) and no exclude; when they do
// not, why. It matches the rules it matched before it said why (the
// same ones, in the same order), so the filter budget is spent alike.
func (p *Policy) keepsWhy(ev *feed.Event, m *meter) (bool, Exclusion) {
	included := false
	var includes []int
	for i, r := range p.Filters {
		switch {
		case r.Exclude && m.match(p, i, ev):
			return false, Exclusion{Rule: i}
		case !r.Exclude:
			includes = append(includes, i)
			included = included || m.match(p, i, ev)
		}
	}
	if included || len(includes) == 0 {
		return true, Exclusion{}
	}
	return false, Exclusion{Rule: -1, Includes: includes}
}

// excludes is the index of the first exclude that matches the event, -1
// when none does.
func (p *Policy) excludes(ev *feed.Event, m *meter) int {
	for i, r := range p.Filters {
		if r.Exclude && m.match(p, i, ev) {
			return i
		}
	}
	return -1
}

func (r Rule) matches(ev *feed.Event) bool {
	if r.Field == Categories {
		cats := ev.Categories()
		if len(cats) == 0 {
			return r.Pattern.MatchString("")
		}
		return slices.ContainsFunc(cats, func(c string) bool { return r.Pattern.MatchString(filterText(c)) })
	}
	v := filterText(FieldValue(ev, r.Field))
	if r.Field == Class && unknownClass(ev) {
		// RFC 5545 §3.8.1.3: a class we do not know is treated as
		// PRIVATE, so a rule on PRIVATE reaches it too.
		return r.Pattern.MatchString(v) || r.Pattern.MatchString("PRIVATE")
	}
	return r.Pattern.MatchString(v)
}

// filterText is the part of a value a filter reads: its first
// MaxFilterText bytes, cut at a character.
func filterText(v string) string {
	if len(v) <= MaxFilterText {
		return v
	}
	cut := MaxFilterText
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut]
}

// unknownClass reports whether the feed's CLASS is none of PUBLIC, PRIVATE
// and CONFIDENTIAL (an x-name or an iana-token).
func unknownClass(ev *feed.Event) bool { return ev.Details != nil && ev.Details.Class != "" }

// FieldValue is the text a filter on f matches (categories joined with
// ", ", for display).
func FieldValue(ev *feed.Event, f Field) string {
	switch f {
	case Summary:
		return ev.Summary
	case Description:
		return ev.Description
	case Location:
		return ev.Location
	case Categories:
		return strings.Join(ev.Categories(), ", ")
	case Class:
		return class(ev)
	case Status:
		return strings.ToUpper(ev.Status)
	case Transp:
		return strings.ToUpper(ev.Transparency)
	case AllDay:
		if ev.Start.AllDay {
			return "true"
		}
		return "false"
	}
	return ""
}

func class(ev *feed.Event) string {
	if unknownClass(ev) {
		return ev.Details.Class
	}
	switch ev.Visibility {
	case feed.VisibilityPrivate:
		return "PRIVATE"
	case feed.VisibilityConfidential:
		return "CONFIDENTIAL"
	}
	return "PUBLIC"
}

// present applies the presentation keys to a kept event.
func (p *Policy) present(ev *feed.Event, c Context, skipped *SkippedAlarms) {
	cancelled := ev.Status == feed.StatusCancelled
	if !cancelled && p.Title != nil {
		ev.Summary = p.Title.expand(ev, c)
	}
	if p.Privacy == Busy {
		if p.Title == nil || cancelled {
			ev.Summary = "Busy"
		}
		ev.Description, ev.Location, ev.URL = "", "", ""
		ev.Visibility = feed.VisibilityPrivate
	}
	if cancelled {
		return
	}
	if p.Visibility != "" && p.Privacy != Busy {
		ev.Visibility = p.Visibility
	}
	if p.Transparency != "" {
		ev.Transparency = p.Transparency
	}
	setting := p.Timed
	if ev.Start.AllDay {
		setting = p.AllDay
	}
	rem := reminders(ev, setting, skipped)
	if p.ColorID != "" || rem != nil {
		ev.Style = &feed.Style{ColorID: p.ColorID, Reminders: rem}
	}
}

// reminders are the event's reminders under a setting (nil: left alone).
func reminders(ev *feed.Event, r Reminders, skipped *SkippedAlarms) *feed.Reminders {
	switch r.Mode {
	case ReminderDefault:
		return &feed.Reminders{UseDefault: true}
	case ReminderNone:
		return &feed.Reminders{}
	case ReminderList:
		return &feed.Reminders{Overrides: r.List}
	case ReminderFeed:
		return fromAlarms(ev.Details, skipped)
	}
	return nil
}

// fromAlarms maps the feed's alarms to Google's reminders: DISPLAY and
// AUDIO ring as popups, EMAIL as emails, at the trigger's distance before
// the start rounded to the minute; the nearest five are kept.
func fromAlarms(d *feed.Details, skipped *SkippedAlarms) *feed.Reminders {
	out := &feed.Reminders{}
	if d == nil {
		return out
	}
	skipped.Absolute += d.AbsoluteAlarms
	for _, a := range d.Alarms {
		var method string
		switch a.Action {
		case "DISPLAY", "AUDIO":
			method = "popup"
		case "EMAIL":
			method = "email"
		default:
			skipped.Action++
			continue
		}
		minutes := int((a.Before + 30*time.Second) / time.Minute)
		switch {
		case a.Before < 0:
			skipped.AfterStart++
			continue
		case a.Before > MaxReminderBefore:
			skipped.TooEarly++
			continue
		}
		r := feed.Reminder{Method: method, Minutes: minutes}
		if !slices.Contains(out.Overrides, r) {
			out.Overrides = append(out.Overrides, r)
		}
	}
	slices.SortFunc(out.Overrides, func(a, b feed.Reminder) int {
		if a.Minutes != b.Minutes {
			return a.Minutes - b.Minutes
		}
		return strings.Compare(a.Method, b.Method)
	})
	if n := len(out.Overrides); n > MaxReminders {
		skipped.OverLimit += n - MaxReminders
		out.Overrides = out.Overrides[:MaxReminders]
	}
	return out
}
