package status

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteTable writes the report as a table for people, with the notes and
// errors that need attention below it.
func WriteTable(w io.Writer, rep *Report) error {
	rep = forPeople(rep)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBSCRIPTION\tSTATE\tERRORS\tMAPPED\tFILTERED\tLAST RUN\tOUTCOME\tCREATED\tUPDATED\tDELETED\tDEFERRED\tFAILED\tREJECTED\tHELD\tREPAIRED\tNEXT RUN")
	for _, s := range rep.Subscriptions {
		last, outcome := "never", "-"
		var r Run
		if s.LastRun != nil {
			r = *s.LastRun
			last, outcome = r.StartedAt.Local().Format(time.DateTime), string(r.Outcome)
		}
		next := "-"
		if s.NextRun != nil {
			next = s.NextRun.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", s.ID, s.State, s.ConsecutiveErrors, s.EventsMapped,
			s.EventsFiltered, last, outcome, r.Created, r.Updated, r.Deleted, r.Deferred, r.Failed, r.Rejected, s.HeldDeletes, r.Repaired, next)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Accounts) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ACCOUNT\tSPACING\tTHROTTLED UNTIL\tREPLICA\tLEASE EXPIRES")
		for _, a := range rep.Accounts {
			until, owner, expires := "-", "-", "-"
			if a.ThrottleUntil != nil {
				until = a.ThrottleUntil.Local().Format(time.DateTime) + " (" + string(a.ThrottleClass) + ")"
			}
			if a.Lease != nil {
				owner, expires = a.Lease.Owner, a.Lease.ExpiresAt.Local().Format(time.DateTime)
				if a.Lease.Expired {
					expires += " (expired)"
				}
			}
			fmt.Fprintf(tw, "%s\t%dms\t%s\t%s\t%s\n", a.Name, a.SpacingMS, until, owner, expires)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, a := range rep.UndeliveredAlerts {
		fmt.Fprintf(w, "\nalerts: the %s alert for %s could not be delivered to any webhook (since %s, last tried %s); the next run that sees it sends it again\n",
			a.Condition, a.Subject, a.Since.Local().Format(time.DateTime), a.LastTried.Local().Format(time.DateTime))
	}
	for _, s := range rep.Subscriptions {
		if s.LastError != nil {
			fmt.Fprintf(w, "\n%s: %s — %s\n  %s\n", s.ID, s.LastError.Class, s.LastError.Message, s.LastError.Detail)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(w, "\n%s: %s\n", s.ID, n)
		}
		for _, r := range s.Rejected {
			fmt.Fprintf(w, "\n%s: event %s rejected by Google: %s\n", s.ID, r.UID, r.Reason)
		}
	}
	return nil
}
