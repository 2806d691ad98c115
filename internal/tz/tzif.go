package tz

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"
)

// ownRulesHorizon is how far a feed's own zone is laid out as a
// time.Location; past it the last offset holds.
var ownRulesHorizon = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// Location lays the definition out as a time.Location (a TZif built from
// its onsets up to 2100), so that times in a zone no IANA zone matches
// keep the feed's own offsets through every computation, series
// expansion included, instead of being pinned to UTC. It is nil when the
// rules give no onset at all.
func (vz *Definition) Location() *time.Location {
	vz.prepare(ownRulesHorizon)
	offsets := []int{vz.before}
	for _, tr := range vz.transitions {
		if !slices.Contains(offsets, tr.offset) {
			offsets = append(offsets, tr.offset)
		}
	}
	std := slices.Min(offsets)
	var abbrs []byte
	abbrAt := make([]int, len(offsets))
	for i, off := range offsets {
		abbrAt[i] = len(abbrs)
		abbrs = append(abbrs, offsetName(off)...)
		abbrs = append(abbrs, 0)
	}
	// Onsets that change nothing are dropped; the rest in order.
	var times []int64
	var types []byte
	cur := vz.before
	for _, tr := range vz.transitions {
		if tr.offset == cur {
			continue
		}
		cur = tr.offset
		times = append(times, tr.at.Unix())
		types = append(types, byte(slices.Index(offsets, tr.offset)))
	}
	if len(offsets) > 255 {
		return nil
	}
	header := func(b []byte, version byte, timecnt, typecnt, charcnt int) []byte {
		b = append(b, "TZif"...)
		b = append(b, version)
		b = append(b, make([]byte, 15)...)
		for _, n := range []int{0, 0, 0, timecnt, typecnt, charcnt} {
			b = binary.BigEndian.AppendUint32(b, uint32(n))
		}
		return b
	}
	// A version 2 file: an empty version 1 block, then 64-bit onsets.
	b := header(nil, '2', 0, 0, 0)
	b = header(b, '2', len(times), len(offsets), len(abbrs))
	for _, t := range times {
		b = binary.BigEndian.AppendUint64(b, uint64(t))
	}
	b = append(b, types...)
	for i, off := range offsets {
		b = binary.BigEndian.AppendUint32(b, uint32(int32(off)))
		dst := byte(0)
		if off != std {
			dst = 1
		}
		b = append(b, dst, byte(abbrAt[i]))
	}
	b = append(b, abbrs...)
	b = append(b, '\n', '\n')
	loc, err := time.LoadLocationFromTZData(vz.tzid, b)
	if err != nil {
		return nil
	}
	return loc
}

// offsetName names an offset as "+0130".
func offsetName(off int) string {
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%c%02d%02d", sign, off/3600, off/60%60)
}
