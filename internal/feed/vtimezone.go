package feed

import (
	"errors"
	"strconv"
	"strings"
	"time"

	ical "github.com/arran4/golang-ical"

	"github.com/calsyncd/calsyncd/internal/tz"
)

// parseVTimezone reads a VTIMEZONE component. It returns the TZIDs it
// declares (a malformed one may declare several) and the rules.
func parseVTimezone(c ical.Component) ([]string, *tz.Definition, error) {
	var ids []string
	for _, p := range c.UnknownPropertiesIANAProperties() {
		if p.IANAToken == "TZID" {
			if id := strings.TrimSpace(p.Value); id != "" {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil, errors.New("VTIMEZONE without TZID")
	}
	var obs []tz.Observance
	for _, sub := range c.SubComponents() {
		var props []ical.IANAProperty
		switch s := sub.(type) {
		case *ical.Standard:
			props = s.Properties
		case *ical.Daylight:
			props = s.Properties
		default:
			continue
		}
		o, err := parseObservance(props)
		if err != nil {
			return ids, nil, err
		}
		obs = append(obs, o)
	}
	if len(obs) == 0 {
		return ids, nil, errors.New("VTIMEZONE without STANDARD or DAYLIGHT")
	}
	return ids, tz.NewDefinition(ids[0], obs), nil
}

// parseObservance reads a STANDARD or DAYLIGHT block.
func parseObservance(props []ical.IANAProperty) (tz.Observance, error) {
	var o tz.Observance
	var haveStart, haveTo bool
	var rule string
	fromSet := false
	for _, p := range props {
		var err error
		switch p.IANAToken {
		case "DTSTART":
			o.Start, err = parseWall(p.Value)
			haveStart = err == nil
		case "TZOFFSETFROM":
			o.From, err = parseUTCOffset(p.Value)
			fromSet = err == nil
		case "TZOFFSETTO":
			o.To, err = parseUTCOffset(p.Value)
			haveTo = err == nil
		case "RRULE":
			rule = p.Value
		case "RDATE":
			for _, v := range strings.Split(p.Value, ",") {
				if i := strings.IndexByte(v, '/'); i >= 0 {
					v = v[:i]
				}
				if t, err := parseWall(v); err == nil {
					o.RDates = append(o.RDates, t)
				}
			}
		}
		if err != nil {
			return o, err
		}
	}
	if !haveStart || !haveTo {
		return o, errors.New("VTIMEZONE observance without DTSTART or TZOFFSETTO")
	}
	if !fromSet {
		o.From = o.To
	}
	if rule != "" {
		opt, err := parseRRule(rule)
		if err != nil {
			return o, err
		}
		opt.Dtstart = o.Start
		if o.Start.Year() < 1900 && opt.Count == 0 && opt.Interval <= 1 {
			// Outlook starts its rules in 1601; rrule-go measures spans
			// as time.Duration, which overflows after 292 years. A rule
			// without COUNT or INTERVAL yields the same onsets from 1900.
			opt.Dtstart = time.Date(1900, o.Start.Month(), o.Start.Day(), o.Start.Hour(), o.Start.Minute(), o.Start.Second(), 0, time.UTC)
		}
		if !opt.Until.IsZero() {
			// UNTIL is UTC; compare it as wall clock in the old offset.
			opt.Until = opt.Until.Add(time.Duration(o.From) * time.Second)
		}
		o.Rule = opt
	}
	return o, nil
}

// parseWall reads a DATE-TIME (or DATE) as wall-clock fields in UTC.
func parseWall(v string) (time.Time, error) {
	v = strings.TrimSuffix(strings.TrimSpace(v), "Z")
	t, date, err := parseICalTime(v)
	if err != nil {
		return time.Time{}, err
	}
	_ = date
	return t, nil
}

// parseUTCOffset reads "+0100", "-0530", "+013000".
func parseUTCOffset(v string) (int, error) {
	v = strings.TrimSpace(v)
	if len(v) != 5 && len(v) != 7 || (v[0] != '+' && v[0] != '-') {
		return 0, errors.New("invalid UTC offset " + strconv.Quote(v))
	}
	n := 0
	for i := 1; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, errors.New("invalid UTC offset " + strconv.Quote(v))
		}
	}
	h, _ := strconv.Atoi(v[1:3])
	m, _ := strconv.Atoi(v[3:5])
	s := 0
	if len(v) == 7 {
		s, _ = strconv.Atoi(v[5:7])
	}
	n = h*3600 + m*60 + s
	if h > 23 || m > 59 || s > 59 {
		return 0, errors.New("invalid UTC offset " + strconv.Quote(v))
	}
	if v[0] == '-' {
		n = -n
	}
	return n, nil
}
