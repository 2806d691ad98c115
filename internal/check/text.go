package check

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Line is the subscription's verdict in one line: OK and what was found,
// or FAIL and each problem with what to do.
func (r Result) Line() string {
	var b strings.Builder
	b.WriteString(r.ID)
	if !r.OK {
		b.WriteString(": FAIL — ")
		b.WriteString(strings.Join(r.Problems, "; "))
		return b.String()
	}
	b.WriteString(": OK — feed ")
	b.WriteString(r.Feed.URL)
	if r.Feed.Status != 0 {
		fmt.Fprintf(&b, " answered %d", r.Feed.Status)
	}
	fmt.Fprintf(&b, ", %s, %s", size(r.Feed.Bytes), plural(r.Feed.Events, "event"))
	if n := r.Feed.SkippedTotal; n > 0 {
		fmt.Fprintf(&b, " (%d skipped)", n)
	}
	fmt.Fprintf(&b, "; calendar %q ", r.Calendar.ID)
	if r.Calendar.Writable == WritableYes {
		fmt.Fprintf(&b, "writable (%s)", r.Calendar.AccessRole)
	} else {
		b.WriteString("exists (writable: " + r.Calendar.Writable + ")")
	}
	b.WriteString(" as " + r.Account.Identity)
	if len(r.Notes) > 0 {
		b.WriteString(". Notes: " + strings.Join(r.Notes, "; "))
	}
	return b.String()
}

func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// WriteText prints one line per subscription.
func (r Report) WriteText(w io.Writer) error {
	for _, s := range r.Subscriptions {
		if _, err := fmt.Fprintln(w, s.Line()); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON prints the report as {"subscriptions":[…]}.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
