package feed

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// Shown is what Google shows of an event: every field a person sees, in
// the feed's terms. gcalwriter writes Google's event from it and the
// content hash is a hash of it, so the two cannot drift apart: a field
// that changes what Google shows changes the hash, and one that does not
// (DTSTAMP, SEQUENCE, property order) never does.
type Shown struct {
	Summary     string
	Description string
	Location    string
	// URL becomes the event's source link (http and https only).
	URL   string
	Start Time
	End   Time
	// Status, Transparency and Visibility are in Google's vocabulary.
	Status       string
	Transparency string
	Visibility   string
	// Recurrence are the rule lines of a series, as Google takes them.
	Recurrence []string
	// ColorID and Reminders are the subscription's (Style): "" and nil
	// leave Google's (a person's own) as they are.
	ColorID   string
	Reminders *Reminders
}

// Shown is what Google shows of e.
func (e *Event) Shown() Shown {
	s := Shown{Summary: e.Summary, Description: e.Description, Location: e.Location, URL: e.URL,
		Start: e.Start, End: e.End, Status: e.Status, Transparency: e.Transparency, Visibility: e.Visibility,
		Recurrence: e.Recurrence}
	if e.Style != nil {
		s.ColorID, s.Reminders = e.Style.ColorID, e.Style.Reminders
	}
	return s
}

// IsRecurring reports whether what is shown is a series.
func (s Shown) IsRecurring() bool { return len(s.Recurrence) > 0 }

// hashVersion changes whenever what we write to Google changes, so that every
// mirrored event is rewritten once.
const hashVersion = "h1"

// ComputeHash returns the content hash of e: a hash of what Google shows of
// it, and of whether it is an override reaching every later occurrence
// (RANGE=THISANDFUTURE, which shape turns into a series of its own, so no
// event written to Google carries it).
func (e *Event) ComputeHash() string { return e.Shown().hash(e.ThisAndFuture) }

func (s Shown) hash(thisAndFuture bool) string {
	// No allocation for a typical event.
	var stack [1024]byte
	h, _ := s.appendHash(stack[:0], thisAndFuture)
	return h
}

// appendHash is hash, building the hashed text in buf[:0] and returning
// it (grown if it had to be) for the next event: a parse hashes every
// event with one buffer, so a long description is not a new buffer
// each time.
func (s Shown) appendHash(buf []byte, thisAndFuture bool) (string, []byte) {
	// The fields go into one buffer, each as "<length>:<field>", hashed at
	// once.
	buf = buf[:0]
	if n := len(s.Summary) + len(s.Description) + len(s.Location) + len(s.URL) + 200 + 64*len(s.Recurrence); n > cap(buf) {
		buf = make([]byte, 0, n)
	}
	w := func(v string) {
		buf = strconv.AppendInt(buf, int64(len(v)), 10)
		buf = append(buf, ':')
		buf = append(buf, v...)
	}
	w(hashVersion)
	w(s.Summary)
	w(s.Description)
	w(s.Location)
	w(s.URL)
	for _, t := range [2]Time{s.Start, s.End} {
		var piece [64]byte
		p := piece[:0]
		if t.AllDay {
			p = t.T.AppendFormat(append(p, 'D'), "2006-01-02")
		} else {
			p = strconv.AppendInt(append(p, 'T'), t.T.Unix(), 10)
			p = append(append(p, '@'), t.Zone...)
		}
		buf = strconv.AppendInt(buf, int64(len(p)), 10)
		buf = append(buf, ':')
		buf = append(buf, p...)
	}
	w(s.Status)
	w(s.Transparency)
	w(s.Visibility)
	if thisAndFuture {
		w("thisandfuture")
	}
	// Colour and reminders count only when set, so an event whose
	// subscription sets neither hashes as it always did.
	if s.ColorID != "" {
		w("color=" + s.ColorID)
	}
	if r := s.Reminders; r != nil {
		w("reminders=" + r.String())
	}
	rec := s.Recurrence
	if !slices.IsSorted(rec) {
		var few [4]string // RRULE, RDATE, EXDATE: sorted without an allocation
		if len(rec) <= len(few) {
			sorted := few[:len(rec)]
			copy(sorted, rec)
			slices.Sort(sorted)
			rec = sorted
		} else {
			rec = slices.Sorted(slices.Values(rec))
		}
	}
	for _, r := range rec {
		w(r)
	}
	sum := sha256.Sum256(buf)
	var out [32]byte
	hex.Encode(out[:], sum[:16])
	return string(out[:]), buf
}

// String is the reminders as the hash takes them: "default", then each
// override as "method:minutes", joined by ","; "" for none at all.
func (r *Reminders) String() string {
	var b strings.Builder
	if r.UseDefault {
		b.WriteString("default")
	}
	for i, o := range r.Overrides {
		if i > 0 || r.UseDefault {
			b.WriteByte(',')
		}
		b.WriteString(o.Method)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(o.Minutes))
	}
	return b.String()
}
