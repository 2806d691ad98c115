// Package render is the sync pass's render stage: a subscription's policy
// for what of its feed reaches Google and how it looks there — filters
// (include and exclude, an RE2 pattern on one field each), a title
// template, Google's event colour, busy-only privacy, visibility,
// transparency and reminders. It is pure: Render maps parsed events to the
// events Google should show, and what it changes lands in feed.Shown, so
// the content hash, and with it the plan, follows a policy change by
// itself.
package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/calsyncd/calsyncd/internal/feed"
)

// Field is what a filter rule matches its pattern against.
type Field string

// Fields a filter can match.
const (
	Summary     Field = "summary"
	Description Field = "description"
	Location    Field = "location"
	// Categories matches when any of the event's categories does; an event
	// without categories is matched as one empty category.
	Categories Field = "categories"
	// Class is PUBLIC, PRIVATE, CONFIDENTIAL (PUBLIC when the feed gives
	// none) or the feed's own value, upper-cased; an unknown value is
	// treated as PRIVATE (RFC 5545 §3.8.1.3), so a rule matches it when
	// its pattern matches either the value or PRIVATE.
	Class Field = "class"
	// Status is CONFIRMED, TENTATIVE or CANCELLED.
	Status Field = "status"
	// Transp is OPAQUE or TRANSPARENT.
	Transp Field = "transp"
	// AllDay is "true" or "false".
	AllDay Field = "all_day"
)

// Fields lists every field, in the order the documentation gives them.
var Fields = []Field{Summary, Description, Location, Categories, Class, Status, Transp, AllDay}

// Rule is one filter: an include or an exclude, matching one field.
type Rule struct {
	Exclude bool
	Field   Field
	Pattern *regexp.Regexp
}

// NewRule compiles a rule; the error says what is wrong with the field or
// the pattern.
func NewRule(exclude bool, field, pattern string) (Rule, error) {
	f := Field(field)
	known := false
	for _, k := range Fields {
		known = known || k == f
	}
	if !known {
		return Rule{}, fmt.Errorf("unknown field %q (fields: %s)", field, fieldList())
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return Rule{}, fmt.Errorf("not an RE2 pattern: %v", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return Rule{Exclude: exclude, Field: f, Pattern: re}, nil
}

func fieldList() string {
	names := make([]string, len(Fields))
	for i, f := range Fields {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// Privacy is how much of an event Google shows.
type Privacy string

// Privacies.
const (
	// Full shows what the feed says (the default).
	Full Privacy = "full"
	// Busy shows a block of time: the title "Busy" (or the title
	// template's), no description, location or link, visibility private.
	Busy Privacy = "busy"
)

// Choices for visibility and transparency; Feed (or "") keeps the feed's.
const Feed = "feed"

// Visibilities (besides Feed).
var visibilities = map[string]string{"default": feed.VisibilityDefault, "public": feed.VisibilityPublic, "private": feed.VisibilityPrivate}

// Transparencies (besides Feed): busy is opaque, free transparent.
var transparencies = map[string]string{"busy": feed.TransparencyOpaque, "free": feed.TransparencyTransparent}

// ParseVisibility checks a visibility setting: feed, default, public or
// private.
func ParseVisibility(s string) (string, error) {
	if s == "" || s == Feed {
		return "", nil
	}
	if v, ok := visibilities[s]; ok {
		return v, nil
	}
	return "", fmt.Errorf("must be feed, default, public or private, got %q", s)
}

// ParseTransparency checks a transparency setting: feed, busy or free.
func ParseTransparency(s string) (string, error) {
	if s == "" || s == Feed {
		return "", nil
	}
	if v, ok := transparencies[s]; ok {
		return v, nil
	}
	return "", fmt.Errorf("must be feed, busy or free, got %q", s)
}

// ParsePrivacy checks a privacy setting: full or busy.
func ParsePrivacy(s string) (Privacy, error) {
	switch Privacy(s) {
	case "", Full:
		return Full, nil
	case Busy:
		return Busy, nil
	}
	return "", fmt.Errorf("must be full or busy, got %q", s)
}

// Policy is one subscription's render policy, compiled. Its zero value
// changes nothing but what Render does for every policy (the text caps).
type Policy struct {
	// Filters are applied together: an event is mirrored when it matches
	// at least one include (if there is any) and no exclude.
	Filters []Rule
	// Title replaces the summary when set.
	Title *Title
	// ColorID is Google's event colour ("" leaves it alone).
	ColorID string
	Privacy Privacy
	// Visibility and Transparency are in Google's vocabulary; "" keeps
	// the feed's.
	Visibility   string
	Transparency string
	// Timed and AllDay are the reminders of timed and all-day events.
	Timed, AllDay Reminders
}

// IsZero reports whether the policy leaves every event as the feed has it
// (but for the text caps Render applies whatever the policy).
// It is what Fingerprint's "" says, without building the fingerprint.
func (p *Policy) IsZero() bool {
	return p == nil || len(p.Filters) == 0 && p.Title == nil && p.ColorID == "" && p.Privacy != Busy &&
		p.Visibility == "" && p.Transparency == "" && p.Timed.Mode == "" && p.AllDay.Mode == ""
}

// Fingerprint identifies what the policy does: equal policies have equal
// fingerprints, and a policy that changes nothing has "". A subscription
// whose fingerprint changed must read its feed in full (the feed may be
// unchanged, its rendering is not).
func (p *Policy) Fingerprint() string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	for _, r := range p.Filters {
		kind := "include"
		if r.Exclude {
			kind = "exclude"
		}
		fmt.Fprintf(&b, "%s %s %s\n", kind, r.Field, strconv.Quote(r.Pattern.String()))
	}
	if p.Title != nil {
		fmt.Fprintf(&b, "title %s\n", strconv.Quote(p.Title.source))
	}
	if p.ColorID != "" {
		fmt.Fprintf(&b, "color %s\n", p.ColorID)
	}
	if p.Privacy == Busy {
		b.WriteString("privacy busy\n")
	}
	if p.Visibility != "" {
		fmt.Fprintf(&b, "visibility %s\n", p.Visibility)
	}
	if p.Transparency != "" {
		fmt.Fprintf(&b, "transparency %s\n", p.Transparency)
	}
	for _, r := range []struct {
		name string
		r    Reminders
	}{{"timed", p.Timed}, {"all_day", p.AllDay}} {
		if r.r.Mode != "" {
			fmt.Fprintf(&b, "reminders %s %s\n", r.name, r.r)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	sum := sha256.Sum256([]byte(b.String()))
	return "r1:" + hex.EncodeToString(sum[:12])
}
