// Package calsyncd holds the sample feeds embedded for `calsyncd demo`; the
// program itself lives in cmd/calsyncd and internal/.
package calsyncd

import "embed"

// SampleFeeds are the demo's iCalendar feeds, from testdata/feeds.
//
//go:embed testdata/feeds/*.ics
var SampleFeeds embed.FS
