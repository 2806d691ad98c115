package gcalfake

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"

	calendar "google.golang.org/api/calendar/v3"
)

// requestKey names a request by what it asks (operation, path, query and
// body), so that injected faults are drawn per request, not from one
// sequence that concurrent requests take in varying order: a seeded run
// meets the same faults however its requests interleave.
func requestKey(op string, r *http.Request) string {
	h := sha256.New()
	h.Write([]byte(op + " " + r.URL.Path + "?" + r.URL.RawQuery + "\x00"))
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(b))
		if err == nil {
			h.Write(b)
		}
	}
	return string(h.Sum(nil))
}

// drawLocked is a fault's draw in [0, 1) for the request key: the n-th
// draw of a kind for the same request is the same in every run of a seed.
func (s *Server) drawLocked(kind, key string) float64 {
	k := kind + "\x00" + key
	n := s.draws[k]
	s.draws[k] = n + 1
	h := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s\x00%d", s.seed, k, n)))
	return float64(binary.BigEndian.Uint64(h[:8])>>11) / (1 << 53)
}

func (s *Server) newID() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuv"
	b := make([]byte, 26)
	for i := range b {
		b[i] = alphabet[s.rng.IntN(len(alphabet))]
	}
	return string(b)
}

// validID: base32hex characters (a-v, 0-9), 5 to 1024 of them. It is
// written here again rather than borrowed from internal/mapping on purpose:
// the emulator checks calsyncd's ids as Google would, independently.
func validID(id string) bool {
	if len(id) < 5 || len(id) > 1024 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'v') {
			return false
		}
	}
	return true
}

func cloneEvent(ev *calendar.Event) *calendar.Event {
	b, _ := json.Marshal(ev)
	var out calendar.Event
	_ = json.Unmarshal(b, &out)
	return &out
}

func sortEvents(evs []*calendar.Event) {
	slices.SortFunc(evs, func(a, b *calendar.Event) int {
		as, _, _ := eventSpan(a)
		bs, _, _ := eventSpan(b)
		return cmp.Or(as.Compare(bs), cmp.Compare(a.Id, b.Id))
	})
}
