// Package mapping derives the Google event id of a feed event from its
// subscription and key: deterministic, so a repeated insert answers 409
// instead of creating a twin.
package mapping

import (
	"crypto/sha256"
	"encoding/base32"
	"strconv"
	"strings"

	calsyncd "github.com/calsyncd/calsyncd"
)

var idEncoding = base32.HexEncoding.WithPadding(base32.NoPadding)

// EventID derives the Google event id of a feed event. Google accepts client
// ids of 5-1024 characters from base32hex (a-v, 0-9) and guarantees an insert
// with a client id succeeds only if no event has that id, so a repeated insert
// answers 409 instead of creating a twin. The id depends only on the
// owner, the subscription, the key and the generation, so a lost database
// or a lost response never leads to a duplicate, and two owners writing one
// calendar under the same subscription id never share an id. The empty
// owner is the legacy form, the ids calsyncd derived before it had owners.
func EventID(owner, subscriptionID string, k calsyncd.Key, generation int) string {
	h := sha256.New()
	if owner == "" {
		h.Write([]byte("calsyncd/v1\x00"))
	} else {
		h.Write([]byte("calsyncd/v2\x00"))
		h.Write([]byte(owner))
		h.Write([]byte{0})
	}
	h.Write([]byte(subscriptionID))
	h.Write([]byte{0})
	h.Write([]byte(k.UID))
	h.Write([]byte{0})
	h.Write([]byte(k.RecurrenceID))
	if generation > 0 {
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(generation)))
	}
	return "cs" + strings.ToLower(idEncoding.EncodeToString(h.Sum(nil)))
}

// Derived reports whether id is the id this owner derives (under any of its
// names, the legacy form included) for the key at the generation.
func Derived(o calsyncd.Owner, subscriptionID string, k calsyncd.Key, generation int, id string) bool {
	for _, name := range o.Names() {
		if EventID(name, subscriptionID, k, generation) == id {
			return true
		}
	}
	return false
}
