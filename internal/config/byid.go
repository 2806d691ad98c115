package config

import "sync"

// subscriptionIndex finds a subscription by id in O(1): a daemon looks
// every subscription up at start (which of the database's are still
// configured), which a scan for each would make quadratic — minutes of a
// core at 100,000. It is built on the first lookup for the
// slice it was asked about and rebuilt when Subscriptions is another
// slice; a hit is checked against the slice, and a miss scans it, so a
// Config whose Subscriptions were edited in place still answers right.
type subscriptionIndex struct {
	mu    sync.Mutex
	first *Subscription // &Subscriptions[0] when built
	n     int
	at    map[string]int
}

// lookup is the index of id in subs, or -1.
func (x *subscriptionIndex) lookup(subs []Subscription, id string) int {
	if len(subs) == 0 {
		return -1
	}
	x.mu.Lock()
	if x.first != &subs[0] || x.n != len(subs) {
		x.at = make(map[string]int, len(subs))
		for i := range subs {
			if _, dup := x.at[subs[i].ID]; !dup {
				x.at[subs[i].ID] = i
			}
		}
		x.first, x.n = &subs[0], len(subs)
	}
	i, ok := x.at[id]
	x.mu.Unlock()
	if ok && subs[i].ID == id {
		return i
	}
	return scan(subs, id)
}

func scan(subs []Subscription, id string) int {
	for i := range subs {
		if subs[i].ID == id {
			return i
		}
	}
	return -1
}
