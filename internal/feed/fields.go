package feed

import (
	"hash/fnv"
	"strconv"
)

// ShownFields names the fields of Shown a Digest covers, in its order.
var ShownFields = []string{"summary", "description", "location", "url", "start", "end", "status", "transparency",
	"visibility", "recurrence", "color", "reminders"}

// digitsPerField is how much of each field's hash a Digest keeps.
const digitsPerField = 4

// Digest is a short fingerprint of each field of what is shown, so that
// two digests tell which fields differ (ChangedFields) where two content
// hashes only tell that something did. A field's fingerprint is 16 bits:
// one change in 65,536 goes unnamed.
func (s Shown) Digest() string {
	fields := [...]string{s.Summary, s.Description, s.Location, s.URL, timeField(s.Start), timeField(s.End), s.Status,
		s.Transparency, s.Visibility, "", s.ColorID, ""}
	var rec []byte
	for _, r := range s.Recurrence {
		rec = append(append(rec, r...), '\n')
	}
	fields[9] = string(rec)
	if s.Reminders != nil {
		fields[11] = "set:" + s.Reminders.String()
	}
	out := make([]byte, 0, len(fields)*digitsPerField)
	for _, f := range fields {
		h := fnv.New32a()
		h.Write([]byte(f))
		v := strconv.FormatUint(uint64(h.Sum32()&0xffff)|0x10000, 16)
		out = append(out, v[1:]...)
	}
	return string(out)
}

func timeField(t Time) string {
	if t.AllDay {
		return "D" + t.Date()
	}
	return "T" + strconv.FormatInt(t.T.Unix(), 10) + "@" + t.Zone
}

// ChangedFields names the fields two digests differ in, in ShownFields'
// order; nil when either digest is unknown (empty, or of another shape).
func ChangedFields(old, new string) []string {
	n := len(ShownFields) * digitsPerField
	if len(old) != n || len(new) != n {
		return nil
	}
	var out []string
	for i, name := range ShownFields {
		a, b := old[i*digitsPerField:(i+1)*digitsPerField], new[i*digitsPerField:(i+1)*digitsPerField]
		if a != b {
			out = append(out, name)
		}
	}
	return out
}
