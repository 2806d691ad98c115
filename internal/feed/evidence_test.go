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
