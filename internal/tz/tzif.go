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
	offsets := vz.offsets()
	times, types := vz.onsets(offsets)
	if len(offsets) > 255 {
		return nil
	}
	loc, err := time.LoadLocationFromTZData(vz.tzid, tzifData(offsets, times, types))
	if err != nil {
		return nil
	}
	return loc
}

// offsets are the zone's distinct UTC offsets, the one before its first
// onset first.
func (vz *Definition) offsets() []int {
	offsets := []int{vz.before}
	for _, tr := range vz.transitions {
		if !slices.Contains(offsets, tr.offset) {
			offsets = append(offsets, tr.offset)
		}
	}
	return offsets
}

// onsets are the instants the offset changes, in order, with the index in
// offsets of the offset each begins; onsets that change nothing are
// dropped.
func (vz *Definition) onsets(offsets []int) (times []int64, types []byte) {
	cur := vz.before
	for _, tr := range vz.transitions {
		if tr.offset == cur {
			continue
		}
		cur = tr.offset
		times = append(times, tr.at.Unix())
		types = append(types, byte(slices.Index(offsets, tr.offset)))
	}
	return times, types
}

// tzifData is a version 2 TZif file of the onsets: an empty version 1
// block, then 64-bit onsets, the offsets (the smallest is standard time,
// the others daylight) and their names.
func tzifData(offsets []int, times []int64, types []byte) []byte {
	std := slices.Min(offsets)
	var abbrs []byte
	abbrAt := make([]int, len(offsets))
	for i, off := range offsets {
		abbrAt[i] = len(abbrs)
		abbrs = append(abbrs, offsetName(off)...)
		abbrs = append(abbrs, 0)
	}
	b := tzifHeader(nil, '2', 0, 0, 0)
	b = tzifHeader(b, '2', len(times), len(offsets), len(abbrs))
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
	return append(b, '\n', '\n')
}

// tzifHeader appends a TZif block's header to b.
func tzifHeader(b []byte, version byte, timecnt, typecnt, charcnt int) []byte {
	b = append(b, "TZif"...)
	b = append(b, version)
	b = append(b, make([]byte, 15)...)
	for _, n := range []int{0, 0, 0, timecnt, typecnt, charcnt} {
		b = binary.BigEndian.AppendUint32(b, uint32(n))
	}
	return b
}

// offsetName names an offset as "+0130".
func offsetName(off int) string {
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%c%02d%02d", sign, off/3600, off/60%60)
}
