package feed

// nameInfo is what the lexer needs to know of a property or component
// name: its interned upper-case form and the sets it is in.
type nameInfo struct {
	name  string
	known bool // knownProperty: a name RFC 5545 or RFC 7986 defines
	event bool // eventProperties: kept in a VEVENT
	alarm bool // alarmProperties: kept in a VEVENT's VALARM
	free  bool // freeText: raw newlines after it are text
}

// unknownName stands for every name not in the table.
var unknownName = &nameInfo{}

// nameTable interns the names feeds use, so that reading a line's name
// costs neither an allocation nor a map lookup: open addressing on an
// FNV-1a hash of the upper-cased name.
var nameTable [1024]*nameInfo

func init() {
	add := func(n string) {
		info := &nameInfo{name: n, known: knownProperty[n], event: eventProperties[n], alarm: alarmProperties[n], free: freeText[n]}
		h := nameHash(n)
		for i := h; ; i++ {
			slot := &nameTable[i%uint32(len(nameTable))]
			if *slot == nil {
				*slot = info
				return
			}
			if (*slot).name == n {
				return
			}
		}
	}
	for _, set := range []map[string]bool{knownProperty, eventProperties, alarmProperties, freeText, eventLike, ignoredComponents} {
		for n := range set {
			add(n)
		}
	}
	for _, n := range []string{"VCALENDAR", "VALARM", "STANDARD", "DAYLIGHT", "AVAILABLE", "VLOCATION", "VRESOURCE",
		"PARTICIPANT", "X-WR-CALNAME", "X-WR-CALDESC", "X-WR-TIMEZONE", "X-WR-RELCALID", "X-PUBLISHED-TTL", "X-LIC-LOCATION",
		"X-MICROSOFT-CDO-BUSYSTATUS", "X-MICROSOFT-CDO-INTENDEDSTATUS", "X-MICROSOFT-CDO-ALLDAYEVENT",
		"X-MICROSOFT-CDO-IMPORTANCE", "X-MICROSOFT-CDO-INSTTYPE", "X-MICROSOFT-CDO-OWNERAPPTID", "X-MICROSOFT-DISALLOW-COUNTER",
		"X-MICROSOFT-CALSCALE", "X-MICROSOFT-CDO-TZID", "X-APPLE-TRAVEL-ADVISORY-BEHAVIOR", "X-APPLE-STRUCTURED-LOCATION",
		"X-GOOGLE-CONFERENCE", "X-ORIGINAL-URL"} {
		add(n)
	}
}

func nameHash(upper string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(upper); i++ {
		h = (h ^ uint32(upper[i])) * 16777619
	}
	return h
}

// lookupName returns the entry of a name (upper-cased as upperASCII does),
// or unknownName.
func lookupName(b []byte) *nameInfo {
	var buf [40]byte
	if len(b) == 0 || len(b) > len(buf) {
		return unknownName
	}
	u := buf[:len(b)]
	h := uint32(2166136261)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		case c == '_':
			c = '-'
		}
		u[i] = c
		h = (h ^ uint32(c)) * 16777619
	}
	for i := h; ; i++ {
		e := nameTable[i%uint32(len(nameTable))]
		if e == nil {
			return unknownName
		}
		if e.name == string(u) {
			return e
		}
	}
}

// internName is upperASCII, without an allocation for a common name.
func internName(b []byte) string {
	if e := lookupName(b); e != unknownName {
		return e.name
	}
	return upperASCII(b)
}

// singularKey is singularNames[name], without hashing.
func singularKey(name string) (propKey, bool) {
	switch name {
	case "UID":
		return pUID, true
	case "SUMMARY":
		return pSummary, true
	case "DESCRIPTION":
		return pDescription, true
	case "LOCATION":
		return pLocation, true
	case "URL":
		return pURL, true
	case "STATUS":
		return pStatus, true
	case "TRANSP":
		return pTransp, true
	case "CLASS":
		return pClass, true
	case "SEQUENCE":
		return pSequence, true
	case "DTSTART":
		return pDTStart, true
	case "DTEND":
		return pDTEnd, true
	case "DURATION":
		return pDuration, true
	case "RECURRENCE-ID":
		return pRecurrenceID, true
	case "LAST-MODIFIED":
		return pLastModified, true
	case "DTSTAMP":
		return pDTStamp, true
	}
	return 0, false
}
