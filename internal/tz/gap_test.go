package tz

import (
	"testing"
	"time"

	"github.com/teambition/rrule-go"
)

// usEasternOffHours is US Eastern with its switches at 03:00 and 01:00
// instead of 02:00, as some exporters write it.
func usEasternOffHours() *Definition {
	return NewDefinition("custom", []Observance{
		{Start: time.Date(1990, 11, 4, 1, 0, 0, 0, time.UTC), From: -4 * 3600, To: -5 * 3600,
			Rule: &rrule.ROption{Freq: rrule.YEARLY, Byweekday: []rrule.Weekday{rrule.SU.Nth(1)}, Bymonth: []int{11}, Dtstart: time.Date(1990, 11, 4, 1, 0, 0, 0, time.UTC)}},
		{Start: time.Date(1990, 3, 11, 3, 0, 0, 0, time.UTC), From: -5 * 3600, To: -4 * 3600,
			Rule: &rrule.ROption{Freq: rrule.YEARLY, Byweekday: []rrule.Weekday{rrule.SU.Nth(2)}, Bymonth: []int{3}, Dtstart: time.Date(1990, 3, 11, 3, 0, 0, 0, time.UTC)}},
	})
}

func TestWallTimesInAGapUseTheOffsetBeforeIt(t *testing.T) {
	wall := func(y int, m time.Month, d, h, mi int) time.Time { return time.Date(y, m, d, h, mi, 0, 0, time.UTC) }
	tests := map[string]struct {
		zone *Zone
		wall time.Time
		want time.Time // UTC
	}{
		// 14 March 2027, New York jumps from 02:00 EST to 03:00 EDT.
		"New York, in the gap":     {NewResolver().Resolve("America/New_York"), wall(2027, 3, 14, 2, 30), wall(2027, 3, 14, 7, 30)},
		"New York, just before it": {NewResolver().Resolve("America/New_York"), wall(2027, 3, 14, 1, 59), wall(2027, 3, 14, 6, 59)},
		"New York, just after it":  {NewResolver().Resolve("America/New_York"), wall(2027, 3, 14, 3, 0), wall(2027, 3, 14, 7, 0)},
		"New York, start of gap":   {NewResolver().Resolve("America/New_York"), wall(2027, 3, 14, 2, 0), wall(2027, 3, 14, 7, 0)},
		"Windows id, in the gap":   {NewResolver().Resolve("Eastern Standard Time"), wall(2027, 3, 14, 2, 30), wall(2027, 3, 14, 7, 30)},
		// 28 March 2027, London jumps from 01:00 GMT to 02:00 BST.
		"London, in the gap": {NewResolver().Resolve("Europe/London"), wall(2027, 3, 28, 1, 15), wall(2027, 3, 28, 1, 15)},
		// Lord Howe Island moves by half an hour: 02:00 → 02:30 (+10:30 → +11).
		"Lord Howe, in the gap": {NewResolver().Resolve("Australia/Lord_Howe"), wall(2027, 10, 3, 2, 15), wall(2027, 10, 2, 15, 45)},
		// A fall-back overlap is not a gap: unchanged (the first 01:30).
		"New York, overlap": {NewResolver().Resolve("America/New_York"), wall(2027, 11, 7, 1, 30), wall(2027, 11, 7, 5, 30)},
		// A feed's own rules: the jump is 03:00 → 04:00 here.
		"custom rules, in the gap":  {&Zone{custom: usEasternOffHours(), How: ByCustom}, wall(2027, 3, 14, 3, 30), wall(2027, 3, 14, 8, 30)},
		"custom rules, before it":   {&Zone{custom: usEasternOffHours(), How: ByCustom}, wall(2027, 3, 14, 2, 30), wall(2027, 3, 14, 7, 30)},
		"custom rules, after it":    {&Zone{custom: usEasternOffHours(), How: ByCustom}, wall(2027, 3, 14, 4, 0), wall(2027, 3, 14, 8, 0)},
		"custom rules, summer noon": {&Zone{custom: usEasternOffHours(), How: ByCustom}, wall(2027, 7, 1, 12, 0), wall(2027, 7, 1, 16, 0)},
	}
	for name, tt := range tests {
		got, ok := tt.zone.WallTime(tt.wall)
		if !ok || !got.Equal(tt.want) {
			t.Errorf("%s: %v is %v, want %v", name, tt.wall.Format("2006-01-02 15:04"), got.UTC(), tt.want)
		}
	}
}

func TestOwnRulesBecomeALocation(t *testing.T) {
	loc := usEasternOffHours().Location()
	if loc == nil {
		t.Fatal("no location")
	}
	for _, tt := range []struct {
		at   time.Time
		want int
	}{
		{time.Date(2027, 1, 15, 12, 0, 0, 0, time.UTC), -5 * 3600},
		{time.Date(2027, 7, 15, 12, 0, 0, 0, time.UTC), -4 * 3600},
		{time.Date(2027, 3, 14, 7, 59, 0, 0, time.UTC), -5 * 3600}, // 02:59 EST: the switch is at 03:00
		{time.Date(2027, 3, 14, 8, 0, 0, 0, time.UTC), -4 * 3600},
		{time.Date(2027, 11, 7, 4, 59, 0, 0, time.UTC), -4 * 3600},
		{time.Date(2027, 11, 7, 5, 0, 0, 0, time.UTC), -5 * 3600}, // 01:00 EDT
		{time.Date(2090, 7, 15, 12, 0, 0, 0, time.UTC), -4 * 3600},
	} {
		if _, off := tt.at.In(loc).Zone(); off != tt.want {
			t.Errorf("%v: offset %d, want %d", tt.at, off, tt.want)
		}
	}
}
