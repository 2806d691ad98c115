package feed

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// TestEvidenceCount holds the word-at-a-time count to the byte-at-a-time
// one it replaced, on ASCII, UTF-8, Windows-1252 and random bytes of every
// length around the eight-byte stride.
func TestEvidenceCount(t *testing.T) {
	naive := func(b []byte) (e utf8Evidence) {
		if utf8.Valid(b) {
			for _, c := range b {
				if c >= utf8.RuneSelf {
					e.valid++
				}
			}
			return e
		}
		e.valid, e.broken = multiByte(b)
		return e
	}
	cases := [][]byte{nil, []byte("plain ascii text, long enough to pass eight"), []byte("Grüße aus Köln — über alles"), []byte("Gr\xfc\xdfe aus K\xf6ln"), []byte("é")}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		cases = append(cases, b)
	}
	for _, b := range cases {
		var got utf8Evidence
		got.count(b)
		if want := naive(b); got != want {
			t.Errorf("count(%q) = %+v, want %+v", b, got, want)
		}
	}
}

// TestEvidenceASCII: a feed is ASCII only when no value had a byte above
// 0x7F, valid UTF-8 or not; the parser then takes every text value as it
// is.
func TestEvidenceASCII(t *testing.T) {
	for _, c := range []struct {
		values []string
		ascii  bool
	}{
		{nil, true},
		{[]string{"plain", ":UID-1@example.com"}, true},
		{[]string{"plain", "Köln"}, false},
		{[]string{"K\xf6ln", "plain"}, false},
	} {
		var e utf8Evidence
		for _, v := range c.values {
			e.count([]byte(v))
		}
		if e.isASCII() != c.ascii {
			t.Errorf("%q: isASCII %v, want %v", c.values, e.isASCII(), c.ascii)
		}
	}
	cal, err := ParseBytes([]byte("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:1\r\nDTSTART:20260101T100000Z\r\nSUMMARY:K\xf6ln\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"), Options{})
	if err != nil || len(cal.Events) != 1 || cal.Events[0].Summary != "Köln" {
		t.Fatalf("a Windows-1252 summary: %v %+v", err, cal)
	}
}
