package preview

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/printable"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// WriteText prints each subscription's plan for a person: a line of
// counts, then one line per event (feed text escaped for the terminal).
func WriteText(w io.Writer, previews []Advised) error {
	for i, ap := range previews {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := writeOne(w, ap); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\n(dry run: nothing was written to Google or to the state database)")
	return nil
}

// writeOne prints one subscription's plan: its counts, what it says of
// the calendars left behind, the guard, the reconcile and the write
// policy, then its events.
func writeOne(w io.Writer, ap Advised) error {
	pv := ap.Preview
	if pv.Err != nil {
		fmt.Fprintf(w, "%s: cannot be previewed: %s\n", pv.Subscription, printable.String(ap.ErrAdvice.String()))
		return nil
	}
	fmt.Fprintf(w, "%s: %d to create, %d to update, %d to delete, %d held by the mass-delete guard, %d excluded by filters, %d unchanged\n",
		pv.Subscription, len(pv.Creates), len(pv.Updates), len(pv.Deletes), len(pv.Held), len(pv.Excluded), pv.Unchanged)
	writeVacateText(w, ap)
	if pv.HeldWhy != "" {
		fmt.Fprintf(w, "  held: %s\n", printable.String(pv.HeldWhy))
	}
	if pv.ReconcileSkipped != nil {
		fmt.Fprintf(w, "  reconcile skipped (the sync goes on without it): %s\n", printable.String(ap.ReconcileAdvice.String()))
	}
	writeKeptText(w, pv)
	if r := pv.Reconcile; r != nil && r.Adopted+r.Restoring+r.Duplicates+r.Repairing > 0 {
		fmt.Fprintf(w, "  reconcile: %d of our events in Google to adopt, %d to restore, %d duplicates to delete, %d edited by hand to write back\n",
			r.Adopted, r.Restoring, r.Duplicates, r.Repairing)
	}
	return writeChangesText(w, pv)
}

// writeVacateText says, for each calendar the subscription moved away
// from, what vacating it deletes or why its events cannot be listed.
func writeVacateText(w io.Writer, ap Advised) {
	for vi, v := range ap.Vacate {
		if v.Err != nil {
			fmt.Fprintf(w, "  moved from %s (account %s): its events there cannot be listed: %s\n",
				printable.String(v.At.Calendar), printable.String(v.At.Account), printable.String(ap.VacateAdvice[vi].String()))
			continue
		}
		fmt.Fprintf(w, "  moved from %s (account %s): %d of its events there to delete once %s holds the feed\n",
			printable.String(v.At.Calendar), printable.String(v.At.Account), v.Deletes, printable.String(ap.Subscription+"'s calendar"))
		if v.Held > 0 {
			fmt.Fprintf(w, "  moved from %s: %d more held by the mass-delete guard: the feed no longer has them, so no copy would remain (--allow-deletes deletes them)\n",
				printable.String(v.At.Calendar), v.Held)
		}
	}
}

// writeChangesText prints one line per event, aligned: what happens to
// it, when it starts, its title, and the details.
func writeChangesText(w io.Writer, pv subscription.Preview) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, group := range []struct {
		verb    string
		changes []subscription.Change
	}{{"create", pv.Creates}, {"update", pv.Updates}, {"delete", pv.Deletes}, {"held", pv.Held}, {"excluded", pv.Excluded}} {
		for _, ch := range group.changes {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", group.verb, startText(ch.Start), summaryText(ch), detailText(group.verb, ch))
		}
	}
	return tw.Flush()
}

func startText(t feed.Time) string {
	switch {
	case t.IsZero():
		return "-"
	case t.AllDay:
		return t.Date() + " (all day)"
	}
	lt := inZone(t)
	zone := t.Zone
	if zone == "" {
		zone = "UTC"
	}
	return lt.Format("2006-01-02 15:04") + " " + zone
}

func summaryText(c subscription.Change) string {
	if c.Summary == "" {
		return "(title unknown) uid " + printable.String(c.Key.String())
	}
	return printable.String(c.Summary)
}

// detailText is the last column: what an update changes, what a create
// or an update writes of the look, the series in words, and why a delete
// or an exclusion (the filter rule by name).
func detailText(verb string, c subscription.Change) string {
	var parts []string
	if verb == "update" {
		if c.Fields == nil {
			parts = append(parts, "fields unknown")
		} else {
			parts = append(parts, strings.Join(c.Fields, ", "))
		}
	}
	if verb == "create" || verb == "update" {
		if l := lookText(c.Look); l != "" {
			parts = append(parts, l)
		}
	}
	if len(c.Recurrence) > 0 {
		parts = append(parts, printable.String(seriesText(c.Recurrence, c.Start)))
	}
	switch {
	case c.Filter != nil && verb == "excluded":
		parts = append(parts, printable.String(c.Filter.Text))
	case c.Filter != nil:
		parts = append(parts, "excluded: "+printable.String(c.Filter.Text))
	case c.Reason != "" && verb != "excluded":
		parts = append(parts, c.Reason)
	}
	return strings.Join(parts, "; ")
}

// lookText is a look in a few words: "banana, private, free, reminders
// popup 10m"; "" for Google's defaults.
func lookText(l subscription.Look) string {
	var parts []string
	if l.Color != "" {
		parts = append(parts, l.Color)
	}
	if l.Visibility != "" {
		parts = append(parts, l.Visibility)
	}
	if l.Free {
		parts = append(parts, "free")
	}
	if r := l.Reminders; r != nil {
		var rs []string
		if r.UseDefault {
			rs = append(rs, "the calendar's")
		}
		for _, o := range r.Overrides {
			rs = append(rs, o.Method+" "+minutesText(o.Minutes))
		}
		if len(rs) == 0 {
			parts = append(parts, "no reminders")
		} else {
			parts = append(parts, "reminders "+strings.Join(rs, ", "))
		}
	}
	return strings.Join(parts, ", ")
}

// minutesText is a reminder's distance: 10m, 2h, 1d, 1w.
func minutesText(m int) string {
	switch {
	case m == 0:
		return "0m"
	case m%(7*24*60) == 0:
		return strconv.Itoa(m/(7*24*60)) + "w"
	case m%(24*60) == 0:
		return strconv.Itoa(m/(24*60)) + "d"
	case m%60 == 0:
		return strconv.Itoa(m/60) + "h"
	}
	return strconv.Itoa(m) + "m"
}

// writeKeptText says what the subscription's write policy keeps from
// Google that mirroring would write: "12 deletes not made (deletes:
// never)".
func writeKeptText(w io.Writer, pv subscription.Preview) {
	var parts []string
	if n := len(pv.KeptDeletes); n > 0 {
		parts = append(parts, plural(n, "delete", "deletes")+" not made (deletes: never)")
	}
	if n := len(pv.KeptUpdates); n > 0 {
		parts = append(parts, plural(n, "update", "updates")+" not made (updates: never)")
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "  kept: %s\n", strings.Join(parts, ", "))
	}
}
