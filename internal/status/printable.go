package status

import (
	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/printable"
)

// forPeople is a copy of the report whose text is safe on a terminal: the
// table and the page show error details, notes, event UIDs and Google's
// messages, and any of them may come from a feed server or a feed
// (a hostile status text could recolour `calsyncd status`). JSON
// keeps the text as it is; its encoder escapes control characters.
func forPeople(rep *Report) *Report {
	out := *rep
	out.Subscriptions = make([]Subscription, len(rep.Subscriptions))
	for i, s := range rep.Subscriptions {
		s.ID, s.Feed, s.Calendar, s.Account = esc(s.ID), esc(s.Feed), esc(s.Calendar), esc(s.Account)
		s.State = calsyncd.State(esc(string(s.State)))
		s.Notes = escAll(s.Notes)
		if s.LastError != nil {
			e := *s.LastError
			e.Class, e.Message, e.Detail = calsyncd.ErrorClass(esc(string(e.Class))), esc(e.Message), esc(e.Detail)
			s.LastError = &e
		}
		s.Rejected = make([]Rejection, len(rep.Subscriptions[i].Rejected))
		for j, r := range rep.Subscriptions[i].Rejected {
			r.UID, r.RecurrenceID, r.Reason = esc(r.UID), esc(r.RecurrenceID), esc(r.Reason)
			s.Rejected[j] = r
		}
		if s.LastRun != nil {
			r := escRun(*s.LastRun)
			s.LastRun = &r
		}
		s.History = make([]Run, len(rep.Subscriptions[i].History))
		for j, r := range rep.Subscriptions[i].History {
			s.History[j] = escRun(r)
		}
		out.Subscriptions[i] = s
	}
	out.Accounts = make([]Account, len(rep.Accounts))
	for i, a := range rep.Accounts {
		a.Name, a.ThrottleClass = esc(a.Name), calsyncd.ErrorClass(esc(string(a.ThrottleClass)))
		if a.Lease != nil {
			l := *a.Lease
			l.Owner = esc(l.Owner)
			a.Lease = &l
		}
		out.Accounts[i] = a
	}
	out.UndeliveredAlerts = make([]UndeliveredAlert, len(rep.UndeliveredAlerts))
	for i, a := range rep.UndeliveredAlerts {
		a.Condition, a.Subject = esc(a.Condition), esc(a.Subject)
		out.UndeliveredAlerts[i] = a
	}
	return &out
}

func esc(s string) string { return printable.String(s) }

func escAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = esc(s)
	}
	return out
}

func escRun(r Run) Run {
	r.Outcome = calsyncd.Outcome(esc(string(r.Outcome)))
	r.ErrorClass, r.Error = calsyncd.ErrorClass(esc(string(r.ErrorClass))), esc(r.Error)
	return r
}
