package config

import (
	"fmt"
	"reflect"

	"go.yaml.in/yaml/v3"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/render"
)

// Presentation is what of a subscription's feed reaches Google and how it
// looks there (the render stage): the keys a subscription and the
// top-level defaults block share. A key left out (nil) takes the
// defaults' value; an empty value ("" or an empty list) is a value too,
// the feed's as it is.
type Presentation struct {
	// Filters decide which events are mirrored: at least one include
	// (when there is one) and no exclude must match.
	Filters []Filter `yaml:"filters"`
	// Title is a template for the title: {summary} {location}
	// {categories} {calendar_name} {subscription}.
	Title *string `yaml:"title"`
	// Color is Google's event colour: "1"-"11" or its name.
	Color *string `yaml:"color"`
	// Privacy is full or busy.
	Privacy *string `yaml:"privacy"`
	// Visibility is feed, default, public or private.
	Visibility *string `yaml:"visibility"`
	// Transparency is feed, busy or free.
	Transparency *string `yaml:"transparency"`
	// Reminders are the reminders of timed and of all-day events.
	Reminders *Reminders `yaml:"reminders"`
	// Deletes is mirror (the default: events that leave the feed are
	// deleted) or never (they stay in Google: add-only); Updates is
	// mirror or never (an event, once written, is never written again).
	// See Writes.
	Deletes *string `yaml:"deletes"`
	Updates *string `yaml:"updates"`
}

// Filter is one rule: an include or an exclude.
type Filter struct {
	Include *FilterMatch `yaml:"include"`
	Exclude *FilterMatch `yaml:"exclude"`
}

// FilterMatch is an RE2 pattern on one field.
type FilterMatch struct {
	Summary     *string `yaml:"summary"`
	Description *string `yaml:"description"`
	Location    *string `yaml:"location"`
	Categories  *string `yaml:"categories"`
	Class       *string `yaml:"class"`
	Status      *string `yaml:"status"`
	Transp      *string `yaml:"transp"`
	AllDay      *string `yaml:"all_day"`
}

// fields are the patterns set, by field name.
func (m *FilterMatch) fields() (names, patterns []string) {
	for _, f := range []struct {
		name string
		p    *string
	}{{"summary", m.Summary}, {"description", m.Description}, {"location", m.Location}, {"categories", m.Categories},
		{"class", m.Class}, {"status", m.Status}, {"transp", m.Transp}, {"all_day", m.AllDay}} {
		if f.p != nil {
			names, patterns = append(names, f.name), append(patterns, *f.p)
		}
	}
	return names, patterns
}

// Reminders are the reminders of timed and of all-day events; a kind left
// out takes the defaults', and without one there the event's reminders
// are left to Google (and to the person who set their own).
type Reminders struct {
	Timed  *ReminderSetting `yaml:"timed"`
	AllDay *ReminderSetting `yaml:"all_day"`
}

// ReminderSetting is default, none, feed, or a list of reminders.
type ReminderSetting struct {
	Mode render.ReminderMode
	List []feed.Reminder
}

var reminderSettingType = reflect.TypeOf(ReminderSetting{})

// decodeReminderSetting reads "default", "none", "feed" or a list such as
// [{popup: 10m}, {email: 1d}], checking Google's limits.
func (d *decoder) decodeReminderSetting(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind == yaml.ScalarNode {
		s, ok := d.scalar(n, path)
		if !ok {
			return
		}
		m, err := render.ParseReminderMode(s)
		if err != nil {
			d.errorf(n.Line, path, "%v", err)
			return
		}
		v.Set(reflect.ValueOf(ReminderSetting{Mode: m}))
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n.Line, path, "expected default, none, feed or a list such as [{popup: 10m}, {email: 1d}]")
		return
	}
	set := ReminderSetting{Mode: render.ReminderList, List: []feed.Reminder{}}
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		d.lines[p] = item.Line
		if item.Kind != yaml.MappingNode || len(item.Content) != 2 {
			d.errorf(item.Line, p, "expected one method and how long before, such as {popup: 10m} or {email: 1d}")
			continue
		}
		k, val := item.Content[0], item.Content[1]
		kp := p + "." + k.Value
		s, ok := d.scalar(val, kp)
		if !ok {
			continue
		}
		before, err := ParseDuration(s)
		if err != nil {
			d.errorf(val.Line, kp, "%v", err)
			continue
		}
		r, err := render.ParseReminder(k.Value, before.D())
		if err != nil {
			d.errorf(k.Line, kp, "%v", err)
			continue
		}
		set.List = append(set.List, r)
	}
	if err := render.CheckReminderList(set.List); err != nil {
		d.errorf(n.Line, path, "%v", err)
	}
	if len(set.List) == 0 {
		set.Mode = render.ReminderNone
	}
	v.Set(reflect.ValueOf(set))
}

// validatePresentation checks the defaults block and each subscription's
// presentation keys where they are written.
func (c *Config) validatePresentation(bad complaint) {
	checkPresentation(bad, "defaults", c.Defaults)
	for i, s := range c.Subscriptions {
		checkPresentation(bad, fmt.Sprintf("subscriptions[%d]", i), s.Presentation)
	}
}

func checkPresentation(bad complaint, at string, p Presentation) {
	for i, f := range p.Filters {
		key := fmt.Sprintf("%s.filters[%d]", at, i)
		if _, err := compileFilter(f); err != nil {
			bad(err.key(key), "%s", err.msg)
		}
	}
	if p.Title != nil {
		if _, err := render.ParseTitle(*p.Title); err != nil {
			bad(at+".title", "%v", err)
		}
	}
	if p.Color != nil {
		if _, err := render.ParseColor(*p.Color); err != nil {
			bad(at+".color", "%v", err)
		}
	}
	if p.Privacy != nil {
		if _, err := render.ParsePrivacy(*p.Privacy); err != nil {
			bad(at+".privacy", "%v", err)
		}
	}
	if p.Visibility != nil {
		if _, err := render.ParseVisibility(*p.Visibility); err != nil {
			bad(at+".visibility", "%v", err)
		}
	}
	if p.Transparency != nil {
		if _, err := render.ParseTransparency(*p.Transparency); err != nil {
			bad(at+".transparency", "%v", err)
		}
	}
	checkWritePolicy(bad, at, p)
}

// filterError says which key of a filter is wrong.
type filterError struct {
	sub string // the key under the filter, e.g. "exclude.summary" ("" for the filter itself)
	msg string
}

func (e *filterError) key(at string) string {
	if e.sub == "" {
		return at
	}
	return at + "." + e.sub
}

func compileFilter(f Filter) (render.Rule, *filterError) {
	if (f.Include == nil) == (f.Exclude == nil) {
		return render.Rule{}, &filterError{msg: "each filter is either include: or exclude:, with one field (write another filter for another field)"}
	}
	kind, m, exclude := "include", f.Include, false
	if f.Exclude != nil {
		kind, m, exclude = "exclude", f.Exclude, true
	}
	names, patterns := m.fields()
	if len(names) != 1 {
		return render.Rule{}, &filterError{sub: kind, msg: fmt.Sprintf("needs exactly one field (%s), has %d; write another filter for another field",
			"summary, description, location, categories, class, status, transp or all_day", len(names))}
	}
	r, err := render.NewRule(exclude, names[0], patterns[0])
	if err != nil {
		return render.Rule{}, &filterError{sub: kind + "." + names[0], msg: err.Error()}
	}
	return r, nil
}

// EffectivePresentation is the subscription's presentation keys with the
// defaults block's filling those it leaves out.
func (c *Config) EffectivePresentation(s Subscription) Presentation {
	p, d := s.Presentation, c.Defaults
	if p.Filters == nil {
		p.Filters = d.Filters
	}
	for _, f := range []struct{ dst, def **string }{{&p.Title, &d.Title}, {&p.Color, &d.Color}, {&p.Privacy, &d.Privacy},
		{&p.Visibility, &d.Visibility}, {&p.Transparency, &d.Transparency}, {&p.Deletes, &d.Deletes}, {&p.Updates, &d.Updates}} {
		if *f.dst == nil {
			*f.dst = *f.def
		}
	}
	if d.Reminders != nil {
		r := Reminders{}
		if p.Reminders != nil {
			r = *p.Reminders
		}
		if r.Timed == nil {
			r.Timed = d.Reminders.Timed
		}
		if r.AllDay == nil {
			r.AllDay = d.Reminders.AllDay
		}
		p.Reminders = &r
	}
	return p
}

// RenderPolicy is the subscription's render policy, compiled from its keys
// and the defaults'. A validated configuration never fails here.
func (c *Config) RenderPolicy(s Subscription) (*render.Policy, error) {
	p := c.EffectivePresentation(s)
	out := &render.Policy{Privacy: render.Full}
	for i, f := range p.Filters {
		r, err := compileFilter(f)
		if err != nil {
			return nil, fmt.Errorf("config: %s: filters[%d]: %s", s.ID, i, err.msg)
		}
		out.Filters = append(out.Filters, r)
	}
	var err error
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if p.Title != nil && *p.Title != "" {
		if out.Title, err = render.ParseTitle(*p.Title); err != nil {
			return nil, fmt.Errorf("config: %s: title: %w", s.ID, err)
		}
	}
	if out.ColorID, err = render.ParseColor(str(p.Color)); err != nil {
		return nil, fmt.Errorf("config: %s: color: %w", s.ID, err)
	}
	if out.Privacy, err = render.ParsePrivacy(str(p.Privacy)); err != nil {
		return nil, fmt.Errorf("config: %s: privacy: %w", s.ID, err)
	}
	if out.Visibility, err = render.ParseVisibility(str(p.Visibility)); err != nil {
		return nil, fmt.Errorf("config: %s: visibility: %w", s.ID, err)
	}
	if out.Transparency, err = render.ParseTransparency(str(p.Transparency)); err != nil {
		return nil, fmt.Errorf("config: %s: transparency: %w", s.ID, err)
	}
	if r := p.Reminders; r != nil {
		out.Timed, out.AllDay = reminders(r.Timed), reminders(r.AllDay)
	}
	return out, nil
}

func reminders(s *ReminderSetting) render.Reminders {
	if s == nil {
		return render.Reminders{}
	}
	return render.Reminders{Mode: s.Mode, List: s.List}
}

// presentationWarnings: privacy: busy with a title template that names
// what busy hides shows it after all.
func (c *Config) presentationWarnings(d *decoder) []Warning {
	out := c.costlyFilterWarnings(d)
	for i, s := range c.Subscriptions {
		p := c.EffectivePresentation(s)
		if p.Privacy == nil || *p.Privacy != string(render.Busy) || p.Title == nil {
			continue
		}
		t, err := render.ParseTitle(*p.Title)
		if err != nil || !(t.Uses("summary") || t.Uses("location") || t.Uses("categories")) {
			continue
		}
		key := fmt.Sprintf("subscriptions[%d].title", i)
		if s.Title == nil {
			key = "defaults.title"
		}
		out = append(out, Warning{File: d.file, Line: d.line(key), Key: key,
			Msg: fmt.Sprintf("%q has privacy: busy, and its title template shows the summary, location or categories busy hides", s.ID)})
	}
	return out
}

// costlyFilterWarnings notes filters whose pattern is costly to run: one
// that compiles to more than render.CostlySteps instructions is run that
// many times over at every character of every event (a pass that spends
// limits.filter_time on filters fails).
func (c *Config) costlyFilterWarnings(d *decoder) []Warning {
	var out []Warning
	check := func(prefix string, filters []Filter) {
		for j, f := range filters {
			kind, m := "include", f.Include
			if f.Exclude != nil {
				kind, m = "exclude", f.Exclude
			}
			if m == nil {
				continue
			}
			names, patterns := m.fields()
			for k, name := range names {
				if n := render.PatternSteps(patterns[k]); n > render.CostlySteps {
					key := fmt.Sprintf("%s.filters[%d].%s.%s", prefix, j, kind, name)
					out = append(out, Warning{File: d.file, Line: d.line(key), Key: key,
						Msg: fmt.Sprintf("this pattern compiles to %d steps, each run at every character of every event's %s: it may cost seconds a pass (a pass that spends limits.filter_time on filters fails); a counted repetition such as {1000} is the usual cause", n, name)})
				}
			}
		}
	}
	check("defaults", c.Defaults.Filters)
	for i, s := range c.Subscriptions {
		check(fmt.Sprintf("subscriptions[%d]", i), s.Filters)
	}
	return out
}
