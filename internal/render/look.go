package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
)

// colorNames are Google's event colours by the names its web interface
// gives them, in the order of their ids ("1" is lavender ... "11" tomato).
var colorNames = []string{"lavender", "sage", "grape", "flamingo", "banana", "tangerine", "peacock", "graphite",
	"blueberry", "basil", "tomato"}

// ParseColor reads a colour: Google's event colour id "1" to "11", or its
// name (case does not matter). "" leaves the colour alone.
func ParseColor(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(colorNames) && strconv.Itoa(n) == s {
		return s, nil
	}
	for i, name := range colorNames {
		if strings.EqualFold(s, name) {
			return strconv.Itoa(i + 1), nil
		}
	}
	return "", fmt.Errorf("unknown colour %q: use Google's event colour id 1 to 11 or one of %s", s, strings.Join(colorNames, ", "))
}

// ColorName is the name of Google's event colour id ("" for none).
func ColorName(id string) string {
	if n, err := strconv.Atoi(id); err == nil && n >= 1 && n <= len(colorNames) {
		return colorNames[n-1]
	}
	return ""
}

// Placeholders a title template may use.
var Placeholders = []string{"summary", "location", "categories", "calendar_name", "subscription"}

// Title is a compiled title template: text with {placeholder}s; "{{" and
// "}}" are literal braces.
type Title struct {
	source string
	parts  []titlePart
}

type titlePart struct {
	text string
	ph   string // a placeholder's name, or "" for text
}

// ParseTitle compiles a title template; an unknown placeholder or an
// unclosed brace is an error.
func ParseTitle(s string) (*Title, error) {
	t := &Title{source: s}
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			t.parts = append(t.parts, titlePart{text: text.String()})
			text.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "{{"), strings.HasPrefix(s[i:], "}}"):
			text.WriteByte(s[i])
			i++
		case s[i] == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("unclosed { in the title template (write {{ for a literal brace)")
			}
			name := s[i+1 : i+end]
			if !knownPlaceholder(name) {
				return nil, fmt.Errorf("unknown placeholder {%s} in the title template (placeholders: {%s})", name, strings.Join(Placeholders, "} {"))
			}
			flush()
			t.parts = append(t.parts, titlePart{ph: name})
			i += end
		default:
			text.WriteByte(s[i])
		}
	}
	flush()
	return t, nil
}

func knownPlaceholder(name string) bool {
	for _, p := range Placeholders {
		if p == name {
			return true
		}
	}
	return false
}

// Uses reports whether the template uses the placeholder.
func (t *Title) Uses(name string) bool {
	for _, p := range t.parts {
		if p.ph == name {
			return true
		}
	}
	return false
}

// String is the template as written.
func (t *Title) String() string { return t.source }

// expand fills the template in for one event, trimmed, its control
// characters left out and within MaxSummary: the expansion stops when the
// title is full, so a template repeating {summary} never builds more than
// the cap, however long the summary.
func (t *Title) expand(ev *feed.Event, c Context) string {
	b := text{max: MaxSummary, trim: true}
	for _, p := range t.parts {
		if b.cut {
			break
		}
		switch p.ph {
		case "":
			b.WriteString(p.text)
		case "summary":
			b.WriteString(ev.Summary)
		case "location":
			b.WriteString(ev.Location)
		case "categories":
			for i, cat := range ev.Categories() {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(cat)
			}
		case "calendar_name":
			b.WriteString(c.CalendarName)
		case "subscription":
			b.WriteString(c.Subscription)
		}
	}
	return b.String()
}

// ReminderMode is what a reminders setting does.
type ReminderMode string

// Reminder modes; "" leaves the event's reminders to Google (and to the
// person who set their own).
const (
	// ReminderDefault: the calendar's default reminders.
	ReminderDefault ReminderMode = "default"
	// ReminderNone: no reminders.
	ReminderNone ReminderMode = "none"
	// ReminderFeed: the feed's VALARMs, DISPLAY and AUDIO as popups,
	// EMAIL as emails, each with its relative trigger.
	ReminderFeed ReminderMode = "feed"
	// ReminderList: the reminders listed.
	ReminderList ReminderMode = "list"
)

// Google's limits on an event's reminder overrides.
const (
	MaxReminders      = 5
	MaxReminderBefore = 4 * 7 * 24 * time.Hour // 40,320 minutes
)

// Reminders is one kind of event's reminders setting.
type Reminders struct {
	Mode ReminderMode
	List []feed.Reminder // with ReminderList
}

// ParseReminderMode reads default, none or feed.
func ParseReminderMode(s string) (ReminderMode, error) {
	switch m := ReminderMode(s); m {
	case ReminderDefault, ReminderNone, ReminderFeed:
		return m, nil
	}
	return "", fmt.Errorf("must be default, none, feed or a list such as [{popup: 10m}, {email: 1d}], got %q", s)
}

// ParseReminder reads one listed reminder: a method (popup or email) and
// how long before the start, in whole minutes within Google's 4 weeks.
func ParseReminder(method string, before time.Duration) (feed.Reminder, error) {
	if method != "popup" && method != "email" {
		return feed.Reminder{}, fmt.Errorf("unknown reminder method %q (use popup or email)", method)
	}
	if before%time.Minute != 0 {
		return feed.Reminder{}, fmt.Errorf("%s: Google's reminders are whole minutes", before)
	}
	if before < 0 || before > MaxReminderBefore {
		return feed.Reminder{}, fmt.Errorf("%s: Google allows 0 to 40320 minutes (4 weeks) before the start", before)
	}
	return feed.Reminder{Method: method, Minutes: int(before / time.Minute)}, nil
}

// CheckReminderList applies Google's limit on the number of reminders.
func CheckReminderList(list []feed.Reminder) error {
	if len(list) > MaxReminders {
		return fmt.Errorf("%d reminders: Google allows at most %d per event", len(list), MaxReminders)
	}
	return nil
}

func (r Reminders) String() string {
	if r.Mode != ReminderList {
		return string(r.Mode)
	}
	return (&feed.Reminders{Overrides: r.List}).String()
}
