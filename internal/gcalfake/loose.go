package gcalfake

import (
	"encoding/binary"
	"hash/fnv"
)

// looseTail is how many instances past the end of what a filter selects an
// expansion still looks at under FiltersLoose, so that instances after the
// filter can be let through too, not only those before it.
const looseTail = 2

// loosePicker chooses the items a loose filter lets through, from the
// candidates offered in the answer's order: the first one, then those whose
// seeded hash picks them, at most looseMax.
type loosePicker struct {
	seed  uint64
	taken int
}

// looseFilter is a picker for one listing, or nil when filters are exact.
func (v view) looseFilter() *loosePicker {
	if v.r.Filters != FiltersLoose {
		return nil
	}
	return &loosePicker{seed: v.seed}
}

// take reports whether the candidate with this id is let through.
func (p *loosePicker) take(id string) bool {
	if p.full() {
		return false
	}
	if p.taken > 0 && looseHash(p.seed, id)%looseOdds != 0 {
		return false
	}
	p.taken++
	return true
}

func (p *loosePicker) full() bool { return p.taken >= looseMax }

func looseHash(seed uint64, id string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed^0x6c6f6f7365)
	h.Write(b[:])
	h.Write([]byte(id))
	return h.Sum64()
}
