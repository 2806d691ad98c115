package status

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// SyncDoc is what `calsyncd sync --json` prints: an object, as every
// command's --json is, so fields can join it later without breaking a
// reader. Its runs and errors have the shapes /status gives them.
type SyncDoc struct {
	Subscriptions []SyncResult `json:"subscriptions"`
}

// SyncResult is one subscription's sync in a SyncDoc.
type SyncResult struct {
	Subscription      string         `json:"subscription"`
	State             calsyncd.State `json:"state"`
	ConsecutiveErrors int            `json:"consecutive_errors"`
	Run               Run            `json:"run"`
	Error             *ErrorReport   `json:"error,omitempty"`
}

// SyncResultOf is the report of one sync as a SyncResult.
func SyncResultOf(rep subscription.Report) SyncResult {
	res := SyncResult{Subscription: rep.Subscription, State: rep.State, ConsecutiveErrors: rep.Transition.ConsecutiveErrors,
		Run: RunOf(rep.Run)}
	if rep.Run.ErrorClass != "" {
		res.Error = &ErrorReport{Class: rep.Run.ErrorClass, Message: Explain(rep.Run.ErrorClass), Detail: rep.Run.Error}
	}
	return res
}

// WriteSyncJSON prints the syncs that recorded a run as a SyncDoc; a
// subscription that did not run (another process held it, or its sync was
// handed to the daemon) has no entry.
func WriteSyncJSON(w io.Writer, reports []subscription.Report) error {
	out := make([]SyncResult, 0, len(reports))
	for _, rep := range reports {
		if rep.Run.ID == 0 {
			continue
		}
		out = append(out, SyncResultOf(rep))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(SyncDoc{Subscriptions: out})
}

// WriteSyncTable prints the syncs that recorded a run as a table, one row
// each, in the order given.
func WriteSyncTable(w io.Writer, reports []subscription.Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBSCRIPTION\tOUTCOME\tSTATE\tCREATED\tUPDATED\tDELETED\tUNCHANGED\tDEFERRED\tFAILED\tREJECTED\tHELD")
	for _, rep := range reports {
		if rep.Run.ID == 0 {
			continue
		}
		r := rep.Run
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", rep.Subscription, r.Outcome, rep.State,
			r.Created, r.Updated, r.Deleted, r.Unchanged, r.Deferred, r.Failed, r.Rejected, r.HeldDeletes)
	}
	return tw.Flush()
}
