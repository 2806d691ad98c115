package render_test

import (
	"fmt"
	"time"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/render"
)

// A subscription that mirrors only work events, prefixes their titles,
// colours them banana and leaves out the cancelled ones.
func ExampleRender() {
	include, _ := render.NewRule(false, "categories", "(?i)^work$")
	exclude, _ := render.NewRule(true, "summary", "(?i)^(canceled|cancelled):")
	title, _ := render.ParseTitle("[Team] {summary}")
	color, _ := render.ParseColor("banana")
	p := &render.Policy{Filters: []render.Rule{include, exclude}, Title: title, ColorID: color}

	start := time.Date(2027, 1, 11, 9, 0, 0, 0, time.UTC)
	mk := func(uid, summary, category string) feed.Event {
		return feed.Event{UID: uid, Summary: summary, Start: feed.Time{T: start}, End: feed.Time{T: start.Add(time.Hour)},
			Details: &feed.Details{Categories: []string{category}}}
	}
	res, err := render.Render([]feed.Event{
		mk("a", "Planning", "Work"),
		mk("b", "Canceled: Review", "Work"),
		mk("c", "Dentist", "Private"),
	}, p, render.Context{Subscription: "team"})
	if err != nil {
		panic(err) // past the filter budget
	}
	for _, ev := range res.Events {
		fmt.Printf("%s (colour %s, %s)\n", ev.Summary, ev.Style.ColorID, render.ColorName(ev.Style.ColorID))
	}
	fmt.Println("excluded:", len(res.Excluded))
	// Output:
	// [Team] Planning (colour 5, banana)
	// excluded: 2
}
