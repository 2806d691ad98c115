package preview

import (
	"encoding/json"
	"io"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// PreviewJSON is the JSON form of one subscription's preview; the schema
// is in docs/operations.md.
type PreviewJSON struct {
	ID             string         `json:"id"`
	Create         []ChangeJSON   `json:"create"`
	Update         []ChangeJSON   `json:"update"`
	Delete         []ChangeJSON   `json:"delete"`
	HeldDeletes    int            `json:"held_deletes"`
	Excluded       int            `json:"excluded"`
	Held           []ChangeJSON   `json:"held"`
	HeldWhy        string         `json:"held_why,omitempty"`
	Vacate         []VacateJSON   `json:"vacate,omitempty"`
	ExcludedEvents []ChangeJSON   `json:"excluded_events"`
	Unchanged      int            `json:"unchanged"`
	Rekeyed        int            `json:"rekeyed"`
	Reconcile      *ReconcileJSON `json:"reconcile,omitempty"`
	KeptDeletes    int            `json:"kept_deletes"`
	KeptUpdates    int            `json:"kept_updates"`
	Warnings       int            `json:"feed_warnings"`
	Error          *ErrorJSON     `json:"error,omitempty"`
}

// ChangeJSON is one event of a preview.
type ChangeJSON struct {
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
	Filter     *FilterJSON `json:"filter,omitempty"`
	Look       *LookJSON   `json:"look,omitempty"`
	Series     string      `json:"series,omitempty"`
	Recurrence []string    `json:"recurrence,omitempty"`
	TitleFrom  string      `json:"title_from,omitempty"`
}

// FilterJSON is why the filters left an event out.
type FilterJSON struct {
	Why   string           `json:"why"`
	Match string           `json:"match"`
	Rules []FilterRuleJSON `json:"rules"`
}

// FilterRuleJSON is one filter a FilterJSON names.
type FilterRuleJSON struct {
	Key     string `json:"key"`
	Kind    string `json:"kind"`
	Field   string `json:"field"`
	Pattern string `json:"pattern"`
}

// LookJSON is what a write sets of an event's look.
type LookJSON struct {
	Color        string          `json:"color,omitempty"`
	Visibility   string          `json:"visibility,omitempty"`
	Transparency string          `json:"transparency,omitempty"`
	Reminders    *[]ReminderJSON `json:"reminders,omitempty"`
}

// ReminderJSON is one reminder; Method "default" is the calendar's.
type ReminderJSON struct {
	Method  string `json:"method"`
	Minutes int    `json:"minutes"`
}

// VacateJSON is a calendar left behind, and what vacating it deletes.
type VacateJSON struct {
	Calendar string `json:"calendar"`
	Account  string `json:"account"`
	Deletes  int    `json:"deletes"`
	Held     int    `json:"held"`
	Error    string `json:"error,omitempty"`
	Remedy   string `json:"remedy,omitempty"`
}

// ReconcileJSON is what a due reconcile would repair, or why it was skipped.
type ReconcileJSON struct {
	Adopted       int    `json:"adopted"`
	Restoring     int    `json:"restoring"`
	Duplicates    int    `json:"duplicates"`
	Repairing     int    `json:"repairing"`
	Skipped       string `json:"skipped,omitempty"`
	SkippedRemedy string `json:"skipped_remedy,omitempty"`
}

// ErrorJSON is why a subscription cannot be previewed.
type ErrorJSON struct {
	Class   calsyncd.ErrorClass `json:"class"`
	Message string              `json:"message"`
	// Problem and Remedy are check's words for it: what is wrong, what to
	// do (absent when it has nothing better than Message).
	Problem string `json:"problem,omitempty"`
	Remedy  string `json:"remedy,omitempty"`
}

// WriteJSON writes the previews as one JSON document, indented.
func WriteJSON(w io.Writer, previews []Advised) error {
	out := struct {
		DryRun        bool          `json:"dry_run"`
		Subscriptions []PreviewJSON `json:"subscriptions"`
	}{DryRun: true, Subscriptions: make([]PreviewJSON, 0, len(previews))}
	for _, ap := range previews {
		out.Subscriptions = append(out.Subscriptions, toJSON(ap))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// toJSON is one subscription's preview as the JSON gives it.
func toJSON(ap Advised) PreviewJSON {
	pv := ap.Preview
	j := PreviewJSON{ID: pv.Subscription, Create: changesJSON(pv.Creates, false), Update: changesJSON(pv.Updates, true),
		Delete: changesJSON(pv.Deletes, false), HeldDeletes: len(pv.Held), Excluded: len(pv.Excluded), Held: changesJSON(pv.Held, false), HeldWhy: pv.HeldWhy,
		ExcludedEvents: changesJSON(pv.Excluded, false), Unchanged: pv.Unchanged, Rekeyed: pv.Rekeyed, Warnings: len(pv.Warnings)}
	j.KeptDeletes, j.KeptUpdates = len(pv.KeptDeletes), len(pv.KeptUpdates)
	for i, v := range pv.Vacate {
		vj := VacateJSON{Calendar: v.At.Calendar, Account: v.At.Account, Deletes: v.Deletes, Held: v.Held}
		if v.Err != nil {
			vj.Error = v.Err.Error()
			vj.Remedy = ap.VacateAdvice[i].Do
		}
		j.Vacate = append(j.Vacate, vj)
	}
	if r := pv.Reconcile; r != nil {
		j.Reconcile = &ReconcileJSON{Adopted: r.Adopted, Restoring: r.Restoring, Duplicates: r.Duplicates, Repairing: r.Repairing}
	} else if pv.ReconcileSkipped != nil {
		j.Reconcile = &ReconcileJSON{Skipped: pv.ReconcileSkipped.Error(), SkippedRemedy: ap.ReconcileAdvice.Do}
	}
	if pv.Err != nil {
		j.Error = &ErrorJSON{Class: calsyncd.ClassOf(pv.Err), Message: pv.Err.Error(), Remedy: ap.ErrAdvice.Do}
		if ap.ErrAdvice.What != pv.Err.Error() {
			j.Error.Problem = ap.ErrAdvice.What
		}
	}
	return j
}

// changesJSON are changes as the JSON gives them; an update says which
// fields it changes ("unknown" when that is not known).
func changesJSON(cs []subscription.Change, update bool) []ChangeJSON {
	out := make([]ChangeJSON, 0, len(cs))
	for _, c := range cs {
		j := ChangeJSON{Summary: c.Summary, Start: startJSON(c.Start), UID: c.Key.UID, RecurrenceID: c.Key.RecurrenceID, Reason: c.Reason,
			Recurrence: c.Recurrence, TitleFrom: c.TitleFrom, Filter: filterToJSON(c.Filter), Look: lookToJSON(c.Look)}
		if len(c.Recurrence) > 0 {
			j.Series = seriesText(c.Recurrence, c.Start)
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

// filterToJSON is which filters excluded an event (nil: none did).
func filterToJSON(f *subscription.Filtered) *FilterJSON {
	if f == nil {
		return nil
	}
	j := &FilterJSON{Why: f.Text, Match: f.Match, Rules: []FilterRuleJSON{}}
	for _, r := range f.Rules {
		j.Rules = append(j.Rules, FilterRuleJSON{Key: r.Key, Kind: r.Kind, Field: r.Field, Pattern: r.Pattern})
	}
	return j
}

// lookToJSON is what a write sets of an event's look (nil: Google's
// defaults); reminders are a list, "default" standing for the calendar's.
func lookToJSON(l subscription.Look) *LookJSON {
	if l.IsZero() {
		return nil
	}
	j := &LookJSON{Color: l.Color, Visibility: l.Visibility}
	if l.Free {
		j.Transparency = "free"
	}
	if l.Reminders != nil {
		rs := []ReminderJSON{}
		if l.Reminders.UseDefault {
			rs = append(rs, ReminderJSON{Method: "default"})
		}
		for _, o := range l.Reminders.Overrides {
			rs = append(rs, ReminderJSON{Method: o.Method, Minutes: o.Minutes})
		}
		j.Reminders = &rs
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
