// Package calsyncd holds the words the rest of calsyncd speaks: the key
// that names a feed event, the mapping that links it to its Google event,
// rejections, a subscription's state, a run and its outcome, an account's
// throttle memory and lease, the error classes, and what a writer reports
// of a batch. It imports nothing of calsyncd's own, so every package can
// import it (Standard Package Layout); the program lives in cmd/calsyncd
// and internal/. It also embeds the demo's sample feeds.
package calsyncd

import "embed"

// SampleFeeds are the demo's iCalendar feeds, from testdata/feeds.
//
//go:embed testdata/feeds/*.ics
var SampleFeeds embed.FS
