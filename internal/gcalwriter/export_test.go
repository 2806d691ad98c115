package gcalwriter

import (
	"time"

	"github.com/calsyncd/calsyncd"
)

// ThrottleUntil lets the external tests read the window with the default
// rate-limit bounds.
func ThrottleUntil(c Classification, level int, jitter float64, now time.Time) time.Time {
	d := calsyncd.DefaultWriterLimits()
	return throttleUntil(c, level, jitter, now, d.RateWindow, d.RateWindowCap)
}
