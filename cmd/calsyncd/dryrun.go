package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/check"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/printable"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// dryRun previews one sync of each subscription: the plan, printed,
// nothing written to Google or to the state database. It takes no lock
// or lease and hands nothing to a running daemon (a dry-run writes
// nothing, so it runs here, beside it). It fails only when a subscription
// could not be previewed.
func (c *syncCommand) dryRun(ctx context.Context, cfg *config.Config, subs []config.Subscription, log *slog.Logger,
	opts subscription.Options, asJSON bool) error {
	if cfg.Store.Driver == "sqlite" {
		if _, err := os.Stat(cfg.DatabaseDSN()); os.IsNotExist(err) {
			fmt.Fprintln(c.m.Stderr, "calsyncd: no state database yet: previewing every subscription's first sync")
		}
	}
	a, err := openApp(ctx, cfg, log, true)
	if err != nil {
		return err
	}
	defer a.Close()
	previews := make([]advisedPreview, len(subs))
	failed := 0
	for i, sub := range subs {
		pv, err := a.runner.Preview(ctx, sub, opts)
		if err != nil && pv.Err == nil {
			pv.Err = err
		}
		ap := advise(cfg, sub, pv)
		if ap.Err != nil {
			failed++
		}
		previews[i] = ap
	}
	if asJSON {
		err = writePreviewJSON(c.m.Stdout, previews)
	} else {
		err = writePreviewText(c.m.Stdout, previews)
	}
	if err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %s could not be previewed", failed, plural(len(subs), "subscription", "subscriptions"))}
	}
	return nil
}

// advisedPreview is a preview with check's advice for each failure in it.
type advisedPreview struct {
	subscription.Preview
	// ErrAdvice is Err's; ReconcileAdvice ReconcileSkipped's; VacateAdvice
	// each Vacate's error's (by index).
	ErrAdvice, ReconcileAdvice check.Advice
	VacateAdvice               map[int]check.Advice
}

// advise adds check's advice to a preview's failures. A reconcile that
// could not list the calendar because Google refuses it (not found, not
// shared, a refused token) fails the preview: the sync's writes would
// fail the same way.
func advise(cfg *config.Config, sub config.Subscription, pv subscription.Preview) advisedPreview {
	ap := advisedPreview{Preview: pv}
	if pv.Err == nil && pv.ReconcileSkipped != nil {
		if a := check.Advise(cfg, sub, pv.ReconcileSkipped); a.Calendar {
			ap.Err = pv.ReconcileSkipped
		}
	}
	ap.ErrAdvice = check.Advise(cfg, sub, ap.Err)
	ap.ReconcileAdvice = check.Advise(cfg, sub, pv.ReconcileSkipped)
	for i, v := range pv.Vacate {
		if v.Err != nil {
			left := sub
			left.Calendar, left.Account = v.At.Calendar, v.At.Account
			if ap.VacateAdvice == nil {
				ap.VacateAdvice = map[int]check.Advice{}
			}
			ap.VacateAdvice[i] = check.Advise(cfg, left, v.Err)
		}
	}
	return ap
}

// previewJSON is the JSON form of one subscription's preview; the schema
// is in docs/operations.md.
type previewJSON struct {
	ID             string           `json:"id"`
	Create         []changeJSON     `json:"create"`
	Update         []changeJSON     `json:"update"`
	Delete         []changeJSON     `json:"delete"`
	HeldDeletes    int              `json:"held_deletes"`
	Excluded       int              `json:"excluded"`
	Held           []changeJSON     `json:"held"`
	HeldWhy        string           `json:"held_why,omitempty"`
	Vacate         []vacateJSON     `json:"vacate,omitempty"`
	ExcludedEvents []changeJSON     `json:"excluded_events"`
	Unchanged      int              `json:"unchanged"`
	Rekeyed        int              `json:"rekeyed"`
	Reconcile      *reconcileJSON   `json:"reconcile,omitempty"`
	KeptDeletes    int              `json:"kept_deletes"`
	KeptUpdates    int              `json:"kept_updates"`
	Warnings       int              `json:"feed_warnings"`
	Error          *previewErrorRep `json:"error,omitempty"`
}

type changeJSON struct {
	Summary      string   `json:"summary"`
	Start        string   `json:"start,omitempty"`
	UID          string   `json:"uid"`
	RecurrenceID string   `json:"recurrence_id,omitempty"`
	Fields       []string `json:"fields,omitempty"`
	Reason       string   `json:"reason,omitempty"`
	// Filter is which filters excluded the event; Look what a create or
	// an update writes beyond Google's defaults; Series the recurrence in
	// words (its lines in Recurrence); TitleFrom where a delete's title
	// came from.
	Filter     *filterJSON `json:"filter,omitempty"`
	Look       *lookJSON   `json:"look,omitempty"`
	Series     string      `json:"series,omitempty"`
	Recurrence []string    `json:"recurrence,omitempty"`
	TitleFrom  string      `json:"title_from,omitempty"`
}

type filterJSON struct {
	Why   string           `json:"why"`
	Match string           `json:"match"`
	Rules []filterRuleJSON `json:"rules"`
}

type filterRuleJSON struct {
	Key     string `json:"key"`
	Kind    string `json:"kind"`
	Field   string `json:"field"`
	Pattern string `json:"pattern"`
}

type lookJSON struct {
	Color        string          `json:"color,omitempty"`
	Visibility   string          `json:"visibility,omitempty"`
	Transparency string          `json:"transparency,omitempty"`
	Reminders    *[]reminderJSON `json:"reminders,omitempty"`
}

type reminderJSON struct {
	Method  string `json:"method"`
	Minutes int    `json:"minutes"`
}

// vacateJSON is a calendar left behind, and what vacating it deletes.
type vacateJSON struct {
	Calendar string `json:"calendar"`
	Account  string `json:"account"`
	Deletes  int    `json:"deletes"`
	Held     int    `json:"held"`
	Error    string `json:"error,omitempty"`
	Remedy   string `json:"remedy,omitempty"`
}

type reconcileJSON struct {
	Adopted       int    `json:"adopted"`
	Restoring     int    `json:"restoring"`
	Duplicates    int    `json:"duplicates"`
	Repairing     int    `json:"repairing"`
	Skipped       string `json:"skipped,omitempty"`
	SkippedRemedy string `json:"skipped_remedy,omitempty"`
}

type previewErrorRep struct {
	Class   calsyncd.ErrorClass `json:"class"`
	Message string              `json:"message"`
	// Problem and Remedy are check's words for it: what is wrong, what to
	// do (absent when it has nothing better than Message).
	Problem string `json:"problem,omitempty"`
	Remedy  string `json:"remedy,omitempty"`
}

func toPreviewJSON(ap advisedPreview) previewJSON {
	pv := ap.Preview
	changes := func(cs []subscription.Change, update bool) []changeJSON {
		out := make([]changeJSON, 0, len(cs))
		for _, c := range cs {
			j := changeJSON{Summary: c.Summary, Start: startJSON(c.Start), UID: c.Key.UID, RecurrenceID: c.Key.RecurrenceID, Reason: c.Reason,
				Recurrence: c.Recurrence, TitleFrom: c.TitleFrom}
			if len(c.Recurrence) > 0 {
				j.Series = seriesText(c.Recurrence, c.Start)
			}
			if f := c.Filter; f != nil {
				j.Filter = &filterJSON{Why: f.Text, Match: f.Match, Rules: []filterRuleJSON{}}
				for _, r := range f.Rules {
					j.Filter.Rules = append(j.Filter.Rules, filterRuleJSON{Key: r.Key, Kind: r.Kind, Field: r.Field, Pattern: r.Pattern})
				}
			}
			if l := c.Look; !l.IsZero() {
				j.Look = &lookJSON{Color: l.Color, Visibility: l.Visibility}
				if l.Free {
					j.Look.Transparency = "free"
				}
				if l.Reminders != nil {
					rs := []reminderJSON{}
					if l.Reminders.UseDefault {
						rs = append(rs, reminderJSON{Method: "default"})
					}
					for _, o := range l.Reminders.Overrides {
						rs = append(rs, reminderJSON{Method: o.Method, Minutes: o.Minutes})
					}
					j.Look.Reminders = &rs
				}
			}
			if update {
				j.Fields = c.Fields
				if j.Fields == nil {
					j.Fields = []string{"unknown"}
				}
			}
			out = append(out, j)
		}
		return out
	}
	j := previewJSON{ID: pv.Subscription, Create: changes(pv.Creates, false), Update: changes(pv.Updates, true),
		Delete: changes(pv.Deletes, false), HeldDeletes: len(pv.Held), Excluded: len(pv.Excluded), Held: changes(pv.Held, false), HeldWhy: pv.HeldWhy,
		ExcludedEvents: changes(pv.Excluded, false), Unchanged: pv.Unchanged, Rekeyed: pv.Rekeyed, Warnings: len(pv.Warnings)}
	j.KeptDeletes, j.KeptUpdates = len(pv.KeptDeletes), len(pv.KeptUpdates)
	for i, v := range pv.Vacate {
		vj := vacateJSON{Calendar: v.At.Calendar, Account: v.At.Account, Deletes: v.Deletes, Held: v.Held}
		if v.Err != nil {
			vj.Error = v.Err.Error()
			vj.Remedy = ap.VacateAdvice[i].Do
		}
		j.Vacate = append(j.Vacate, vj)
	}
	if r := pv.Reconcile; r != nil {
		j.Reconcile = &reconcileJSON{Adopted: r.Adopted, Restoring: r.Restoring, Duplicates: r.Duplicates, Repairing: r.Repairing}
	} else if pv.ReconcileSkipped != nil {
		j.Reconcile = &reconcileJSON{Skipped: pv.ReconcileSkipped.Error(), SkippedRemedy: ap.ReconcileAdvice.Do}
	}
	if pv.Err != nil {
		j.Error = &previewErrorRep{Class: calsyncd.ClassOf(pv.Err), Message: pv.Err.Error(), Remedy: ap.ErrAdvice.Do}
		if ap.ErrAdvice.What != pv.Err.Error() {
			j.Error.Problem = ap.ErrAdvice.What
		}
	}
	return j
}

// startJSON is a start as the JSON gives it: the date of an all-day event,
// RFC 3339 in the event's zone otherwise, "" when unknown.
func startJSON(t feed.Time) string {
	switch {
	case t.IsZero():
		return ""
	case t.AllDay:
		return t.Date()
	}
	return inZone(t).Format(time.RFC3339)
}

func inZone(t feed.Time) time.Time {
	if t.Zone != "" {
		if loc, err := time.LoadLocation(t.Zone); err == nil {
			return t.T.In(loc)
		}
	}
	return t.T.UTC()
}

func writePreviewJSON(w io.Writer, previews []advisedPreview) error {
	out := struct {
		DryRun        bool          `json:"dry_run"`
		Subscriptions []previewJSON `json:"subscriptions"`
	}{DryRun: true, Subscriptions: make([]previewJSON, 0, len(previews))}
	for _, pv := range previews {
		out.Subscriptions = append(out.Subscriptions, toPreviewJSON(pv))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// writePreviewText prints each subscription's plan for a person: a line
// of counts, then one line per event (feed text escaped for the
// terminal).
func writePreviewText(w io.Writer, previews []advisedPreview) error {
	for i, ap := range previews {
		pv := ap.Preview
		if i > 0 {
			fmt.Fprintln(w)
		}
		if pv.Err != nil {
			fmt.Fprintf(w, "%s: cannot be previewed: %s\n", pv.Subscription, printable.String(ap.ErrAdvice.String()))
			continue
		}
		fmt.Fprintf(w, "%s: %d to create, %d to update, %d to delete, %d held by the mass-delete guard, %d excluded by filters, %d unchanged\n",
			pv.Subscription, len(pv.Creates), len(pv.Updates), len(pv.Deletes), len(pv.Held), len(pv.Excluded), pv.Unchanged)
		for vi, v := range pv.Vacate {
			if v.Err != nil {
				fmt.Fprintf(w, "  moved from %s (account %s): its events there cannot be listed: %s\n",
					printable.String(v.At.Calendar), printable.String(v.At.Account), printable.String(ap.VacateAdvice[vi].String()))
				continue
			}
			fmt.Fprintf(w, "  moved from %s (account %s): %d of its events there to delete once %s holds the feed\n",
				printable.String(v.At.Calendar), printable.String(v.At.Account), v.Deletes, printable.String(pv.Subscription+"'s calendar"))
			if v.Held > 0 {
				fmt.Fprintf(w, "  moved from %s: %d more held by the mass-delete guard: the feed no longer has them, so no copy would remain (--allow-deletes deletes them)\n",
					printable.String(v.At.Calendar), v.Held)
			}
		}
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
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, group := range []struct {
			verb    string
			changes []subscription.Change
		}{{"create", pv.Creates}, {"update", pv.Updates}, {"delete", pv.Deletes}, {"held", pv.Held}, {"excluded", pv.Excluded}} {
			for _, ch := range group.changes {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", group.verb, startText(ch.Start), summaryText(ch), detailText(group.verb, ch))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\n(dry run: nothing was written to Google or to the state database)")
	return nil
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
