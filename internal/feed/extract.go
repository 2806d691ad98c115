package feed

import (
	"fmt"
	"strconv"
	"strings"

	ical "github.com/arran4/golang-ical"
)

// A VEVENT's properties, sorted out before they are read as an Event.

// Properties of a VEVENT that may appear once.
type propKey int

const (
	pUID propKey = iota
	pSummary
	pDescription
	pLocation
	pURL
	pStatus
	pTransp
	pClass
	pSequence
	pDTStart
	pDTEnd
	pDuration
	pRecurrenceID
	pLastModified
	pDTStamp
	nSingular
)

var singularNames = map[string]propKey{
	"UID": pUID, "SUMMARY": pSummary, "DESCRIPTION": pDescription, "LOCATION": pLocation, "URL": pURL,
	"STATUS": pStatus, "TRANSP": pTransp, "CLASS": pClass, "SEQUENCE": pSequence, "DTSTART": pDTStart,
	"DTEND": pDTEnd, "DURATION": pDuration, "RECURRENCE-ID": pRecurrenceID, "LAST-MODIFIED": pLastModified,
	"DTSTAMP": pDTStamp,
}

// defining properties decide when and which an event is: two different
// values make the event ambiguous, so it is skipped rather than guessed
// (a guess would depend on property order and flip the hash).
func (k propKey) defining() bool {
	return k == pUID || k == pDTStart || k == pDTEnd || k == pDuration || k == pRecurrenceID
}

// rawEvent is a VEVENT's properties, sorted out.
type rawEvent struct {
	index  int
	uid    string
	single [nSingular]*ical.IANAProperty
	rrules []*ical.IANAProperty
	exdate []*ical.IANAProperty
	rdate  []*ical.IANAProperty
	// exrules are RFC 2445's exclusion rules (recurrence.go applies them).
	exrules []*ical.IANAProperty
	err     error
	// periods are the RDATE PERIODs whose length is not the series'.
	periods []period
	// categories are the CATEGORIES lines; subs the VEVENT's components
	// (its VALARMs).
	categories []*ical.IANAProperty
	subs       []ical.Component
	// charset makes its text values UTF-8.
	charset *textCharset
}

func (r *rawEvent) text(k propKey) string {
	if p := r.single[k]; p != nil {
		return r.charset.text(textValue(&p.BaseProperty))
	}
	return ""
}

// extract sorts a VEVENT's properties into r (reused: its lists keep
// their room) and notes the years its TZIDs are used in.
func (p *parser) extract(r *rawEvent, props []ical.IANAProperty, index int) {
	*r = rawEvent{index: index, rrules: r.rrules[:0], exdate: r.exdate[:0], rdate: r.rdate[:0], exrules: r.exrules[:0], categories: r.categories[:0], periods: r.periods[:0], charset: p.charset}
	for i := range props {
		pr := &props[i]
		name := pr.IANAToken
		if k, ok := singularKey(name); ok {
			if prev := r.single[k]; prev != nil {
				if prev.Value == pr.Value && sameParams(prev, pr) {
					continue
				}
				if k.defining() {
					r.err = fmt.Errorf("%s appears twice with different values", name)
					continue
				}
				// Keep the smaller value, whatever the order.
				if pr.Value > prev.Value {
					continue
				}
			}
			r.single[k] = pr
			if k == pUID {
				r.uid = strings.TrimSpace(p.charset.text(textValue(&pr.BaseProperty)))
			}
			if k == pDTStart || k == pDTEnd || k == pRecurrenceID {
				p.noteYear(pr)
			}
			continue
		}
		if (name == "RRULE" || name == "EXRULE") && strings.IndexByte(pr.Value, '\\') >= 0 {
			cp := *pr
			cp.Value = ruleText(pr.Value)
			pr = &cp
		}
		switch name {
		case "RRULE":
			r.rrules = append(r.rrules, pr)
		case "EXDATE":
			r.exdate = append(r.exdate, pr)
			p.noteYear(pr)
		case "RDATE":
			r.rdate = append(r.rdate, pr)
			p.noteYear(pr)
		case "EXRULE":
			r.exrules = append(r.exrules, pr)
		case "CATEGORIES":
			r.categories = append(r.categories, pr)
		}
	}
	p.alignKinds(r)
}

// ruleText reads a recurrence rule that its producer escaped as TEXT
// (RRULE:FREQ=DAILY\;COUNT=10): a RECUR value has no escapes, so a
// backslash before ';' or ',' (or itself) only hides the separator.
func ruleText(v string) string {
	if strings.IndexByte(v, '\\') < 0 {
		return v
	}
	return ruleUnescaper.Replace(v)
}

var ruleUnescaper = strings.NewReplacer(`\;`, ";", `\,`, ",", `\\`, `\`)

func sameParams(a, b *ical.IANAProperty) bool {
	return param(a, "TZID") == param(b, "TZID") && param(a, "VALUE") == param(b, "VALUE")
}

func (p *parser) noteYear(pr *ical.IANAProperty) {
	tzid := param(pr, "TZID")
	if tzid == "" || len(pr.Value) < 4 {
		return
	}
	if y, err := strconv.Atoi(pr.Value[:4]); err == nil && y > 1 && y < 9999 {
		p.zones.UseYear(tzid, y)
	}
}

// param returns a property parameter's first value, its RFC 6868 escapes
// (^n ^' ^^) read.
func param(pr *ical.IANAProperty, name string) string {
	if v := pr.ICalParameters[name]; len(v) > 0 {
		return strings.TrimSpace(caretDecode(v[0]))
	}
	return ""
}

// caretDecode reads RFC 6868's escapes in a parameter value: ^n is a
// newline, ^' a double quote, ^^ a caret; any other caret is itself.
func caretDecode(v string) string {
	if strings.IndexByte(v, '^') < 0 {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '^' && i+1 < len(v) {
			switch v[i+1] {
			case 'n', 'N':
				b.WriteByte('\n')
				i++
				continue
			case '\'':
				b.WriteByte('"')
				i++
				continue
			case '^':
				b.WriteByte('^')
				i++
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// textValue is the value of a property whose value is TEXT by
// definition (SUMMARY, DESCRIPTION, UID...), unescaped whatever its
// parameters say: a VALUE parameter that names no TEXT type
// (Proton Mail writes SUMMARY;VALUE="A^nB^n":A\nB\n) left it as it was
// written, and its escapes would show in Google.
func textValue(pr *ical.BaseProperty) string {
	if pr.ICalParameters == nil || pr.GetValueType() == ical.ValueDataTypeText {
		return pr.Value
	}
	return ical.FromText(pr.Value)
}
