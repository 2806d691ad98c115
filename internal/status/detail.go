package status

import (
	"context"
	"errors"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// detailRuns is how many runs a subscription's page lists.
const detailRuns = 20

// ErrNoSubscription: the report knows no subscription of that id.
var ErrNoSubscription = errors.New("status: no such subscription")

// Detail is one subscription's page: its status (in the whole report, for
// its account and the time it was generated) and its recent runs with
// what each wrote, newest first.
type Detail struct {
	Report       *Report
	Subscription Subscription
	Runs         []RunDetail
}

// RunDetail is a run and the changes the store kept of it (at most
// calsyncd.MaxRunChanges; the run's counts are whole).
type RunDetail struct {
	Run
	Changes []Change
}

// Change is one event a run created, updated or deleted, with its title
// and start as written ("" and zero when a delete's are not known).
type Change struct {
	Kind   calsyncd.RunChangeKind
	UID    string
	Title  string
	Start  time.Time
	AllDay bool
}

// BuildDetail is the page of subscription id of rep.
func BuildDetail(ctx context.Context, src Source, rep *Report, id string) (*Detail, error) {
	for _, s := range rep.Subscriptions {
		if s.ID != id {
			continue
		}
		d := &Detail{Report: rep, Subscription: s}
		runs, err := src.Runs(ctx, id, detailRuns)
		if err != nil {
			return nil, err
		}
		for _, r := range runs {
			kept, err := src.RunChanges(ctx, r.ID)
			if err != nil {
				return nil, err
			}
			rd := RunDetail{Run: RunOf(r)}
			for _, c := range kept {
				rd.Changes = append(rd.Changes, Change{Kind: c.Kind, UID: c.Key.UID, Title: c.Title, Start: c.Start, AllDay: c.AllDay})
			}
			d.Runs = append(d.Runs, rd)
		}
		return d, nil
	}
	return nil, ErrNoSubscription
}
