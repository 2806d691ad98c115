package feed

import (
	"github.com/calsyncd/calsyncd/internal/tz"

	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	ical "github.com/arran4/golang-ical"
)

// This file keeps the way feeds were parsed before scan.go, as the
// reference the scanner must match: the cleaned text (clean) read by
// ical.ParseCalendar; when that fails, the calendar's own properties and
// then each top-level component parsed on their own, an unreadable one
// skipped with a warning.

// refTree is golang-ical's reading of a body.
type refTree struct {
	evidence utf8Evidence // over the cleaned lines, as the scanner counts
	comps    []ical.Component
	props    []ical.CalendarProperty
	warnings []Warning // repairs, then the components skipped
}

func referenceTree(body []byte) (*refTree, error) {
	cl, err := clean(body)
	if err != nil {
		return nil, err
	}
	rt := &refTree{}
	rt.evidence.count(cl.data)
	for _, rep := range cl.repairs {
		rt.warnings = append(rt.warnings, Warning{Message: "repaired: " + rep})
	}
	if ic, err := parseICal(cl.data); err == nil {
		rt.comps, rt.props = ic.Components, ic.CalendarProperties
		return rt, nil
	}
	if hc, err := parseICal(wrapCalendar(cl.header)); err == nil {
		rt.props = hc.CalendarProperties
	}
	for _, s := range cl.comps {
		chunk := cl.data[s.start:s.end]
		c, err := parseICal(wrapCalendar(chunk))
		if err != nil || len(c.Components) != 1 {
			if err == nil {
				err = errors.New("no component")
			}
			uid, summary := peekIdentity(chunk)
			rt.warnings = append(rt.warnings, Warning{UID: uid, Message: fmt.Sprintf("%s %d%s skipped: unreadable: %v", s.name, s.nth, quoteSummary(summary), err)})
			continue
		}
		rt.comps = append(rt.comps, c.Components[0])
	}
	return rt, nil
}

// referenceParse is ParseBytes on golang-ical's reading.
func referenceParse(body []byte, opts Options) (*Calendar, error) {
	rt, err := referenceTree(body)
	if err != nil {
		return nil, err
	}
	p := &parser{opts: opts, cal: &Calendar{}, zones: tz.NewResolver(), warned: map[string]bool{},
		charset: &textCharset{utf8: rt.evidence.isUTF8()}}
	if dec, _ := decoderFor(opts.Charset); dec.text != nil {
		p.charset.fallback = dec.text
	}
	p.cal.Warnings = rt.warnings
	p.calendarProps(rt.props)
	p.run(rt.comps)
	return p.cal, nil
}

func parseICal(data []byte) (*ical.Calendar, error) {
	return ical.ParseCalendarWithOptions(bytes.NewReader(data), ical.WithUnknownPropertyHandler(ical.AcceptUnknownPropertyHandler))
}

func wrapCalendar(body []byte) []byte {
	out := make([]byte, 0, len(body)+32)
	out = append(out, "BEGIN:VCALENDAR\n"...)
	out = append(out, body...)
	return append(out, "END:VCALENDAR\n"...)
}

// peekIdentity finds the UID and SUMMARY lines of a cleaned component, to
// name it in a warning.
func peekIdentity(chunk []byte) (uid, summary string) {
	for line := range bytes.SplitSeq(chunk, []byte("\n")) {
		switch {
		case bytes.HasPrefix(line, []byte("UID:")) && uid == "":
			uid = string(bytes.TrimSpace(line[4:]))
		case bytes.HasPrefix(line, []byte("SUMMARY")) && summary == "":
			if i := bytes.IndexByte(line, ':'); i >= 0 {
				summary = ical.FromText(string(line[i+1:]))
			}
		}
	}
	return uid, summary
}

// scanTree is the scanner's reading of a body, in refTree's form.
func scanTree(body []byte) (*refTree, error) {
	tree := newTreeSink()
	repairs, err := lex(bytesSource(body), tree)
	if err != nil {
		return nil, err
	}
	rt := &refTree{comps: tree.comps, props: tree.props}
	if tree.propsBad {
		rt.props = nil
	}
	for _, rep := range repairs {
		rt.warnings = append(rt.warnings, Warning{Message: "repaired: " + rep})
	}
	rt.warnings = append(rt.warnings, tree.unreadable...)
	return rt, nil
}

// dump renders a tree for comparison: an empty parameter map and none are
// the same.
func (rt *refTree) dump() string {
	var b strings.Builder
	for _, p := range rt.props {
		dumpProp(&b, "", p.BaseProperty)
	}
	for _, c := range rt.comps {
		dumpComp(&b, "", c)
	}
	for _, w := range rt.warnings {
		fmt.Fprintf(&b, "warning %q %q\n", w.UID, w.Message)
	}
	return b.String()
}

func dumpComp(b *strings.Builder, indent string, c ical.Component) {
	fmt.Fprintf(b, "%s%T", indent, c)
	if g, ok := c.(*ical.GeneralComponent); ok {
		fmt.Fprintf(b, " %q", g.Token)
	}
	b.WriteString("\n")
	for _, p := range c.UnknownPropertiesIANAProperties() {
		dumpProp(b, indent+"  ", p.BaseProperty)
	}
	for _, s := range c.SubComponents() {
		dumpComp(b, indent+"  ", s)
	}
}

func dumpProp(b *strings.Builder, indent string, p ical.BaseProperty) {
	fmt.Fprintf(b, "%s%q", indent, p.IANAToken)
	keys := make([]string, 0, len(p.ICalParameters))
	for k := range p.ICalParameters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, " %q=%q", k, p.ICalParameters[k])
	}
	fmt.Fprintf(b, " = %q\n", p.Value)
}

// dumpCalendar renders everything a parse gives.
func dumpCalendar(cal *Calendar) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name %q zone %q outside %d %v\n", cal.Name, cal.TimeZone, cal.OutsideWindow, cal.Outside)
	for _, w := range cal.Warnings {
		fmt.Fprintf(&b, "warning %q %q\n", w.UID, w.Message)
	}
	for _, e := range cal.Events {
		fmt.Fprintf(&b, "event %q %q %v %q %q %q %q %s %s %q %q %q %q %d %q\n", e.UID, e.RecurrenceID, e.ThisAndFuture,
			e.Summary, e.Description, e.Location, e.URL, dumpTime(e.Start), dumpTime(e.End), e.Status, e.Transparency,
			e.Visibility, e.Recurrence, e.Sequence, e.Hash)
	}
	return b.String()
}

func dumpTime(t Time) string {
	return fmt.Sprintf("%v/%s/%s/%q", t.AllDay, t.T.Format("2006-01-02T15:04:05.999999999Z07:00"), t.T.Location(), t.Zone)
}
