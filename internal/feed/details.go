package feed

import (
	"strings"
	"time"

	ical "github.com/arran4/golang-ical"
)

// details reads what the render stage needs beyond what Google shows: the
// categories, an unusual CLASS and the alarms. It returns nil when there is
// none of it.
func details(ev *Event, r *rawEvent, class string) *Details {
	d := &Details{Class: class}
	for _, pr := range r.categories {
		// The value is a TEXT list, already unescaped: an escaped comma
		// inside one category splits it, a rare loss.
		for c := range strings.SplitSeq(r.charset.text(textValue(&pr.BaseProperty)), ",") {
			if c = strings.TrimSpace(c); c != "" {
				d.Categories = append(d.Categories, c)
			}
		}
	}
	for _, sub := range r.subs {
		if a, ok := sub.(*ical.VAlarm); ok {
			readAlarm(d, ev, a.Properties)
		}
	}
	if d.Class == "" && len(d.Categories) == 0 && len(d.Alarms) == 0 && d.AbsoluteAlarms == 0 {
		return nil
	}
	return d
}

// readAlarm adds one VALARM: a relative trigger becomes an Alarm, an
// absolute one is counted; one without a usable trigger is ignored.
func readAlarm(d *Details, ev *Event, props []ical.IANAProperty) {
	var action string
	var trigger *ical.IANAProperty
	for i := range props {
		switch props[i].IANAToken {
		case "ACTION":
			if action == "" {
				action = strings.ToUpper(strings.TrimSpace(props[i].Value))
			}
		case "TRIGGER":
			if trigger == nil {
				trigger = &props[i]
			}
		}
	}
	if trigger == nil {
		return
	}
	v := strings.TrimSpace(trigger.Value)
	if strings.EqualFold(param(trigger, "VALUE"), "DATE-TIME") || (len(v) > 0 && v[0] >= '0' && v[0] <= '9') {
		d.AbsoluteAlarms++
		return
	}
	dur, err := ParseDuration(v)
	if err != nil {
		return
	}
	offset := time.Duration(dur.Days)*24*time.Hour + dur.Exact
	if strings.EqualFold(param(trigger, "RELATED"), "END") {
		offset += ev.End.T.Sub(ev.Start.T)
	}
	d.Alarms = append(d.Alarms, Alarm{Action: action, Before: -offset})
}
