package check

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	calendar "google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"

	"github.com/calsyncd/calsyncd/internal/googleauth"
)

// accountResult is an account's check, shared by its subscriptions.
type accountResult struct {
	Account
	creds    *googleauth.Credentials
	svc      *calendar.Service
	problems []problem
}

// calendarResult is a calendar's check for one account.
type calendarResult struct {
	Calendar
	problems []problem
	notes    []string
}

// account checks, once per account, that its credentials load and get a
// token. A person's token that has expired is refreshed and saved, as
// `calsyncd auth status` does; nothing else is written.
func (c *Checker) account(ctx context.Context, name string) accountResult {
	c.mu.Lock()
	once, ok := c.accounts[name]
	if !ok {
		once = sync.OnceValue(func() accountResult { return c.checkAccount(ctx, name) })
		c.accounts[name] = once
	}
	c.mu.Unlock()
	return once()
}

func (c *Checker) checkAccount(ctx context.Context, name string) accountResult {
	res := accountResult{Account: Account{Name: name}}
	creds, err := googleauth.Load(ctx, c.Config, name, c.Auth)
	if err != nil {
		res.Token = "unusable"
		res.problems = []problem{{what: err.Error()}} // googleauth's errors say what to do
		return res
	}
	res.creds, res.Identity = creds, creds.Identity.String()
	if creds.TokenSource == nil {
		res.Token = "none needed (an emulator endpoint)"
	} else if tok, err := creds.TokenSource.Token(); err != nil {
		res.Token = "cannot get an access token"
		var aerr *googleauth.Error
		p := problem{what: "account " + name + " cannot get an access token: " + err.Error()}
		if !errors.As(err, &aerr) {
			p.do = "Google's token endpoint did not answer; try again, and `calsyncd auth status` for the account"
		}
		res.problems = []problem{p}
		return res
	} else {
		res.Token = "Google issued an access token"
		if !tok.Expiry.IsZero() {
			res.Token += " (valid until " + tok.Expiry.UTC().Format("2006-01-02 15:04 UTC") + ")"
		}
	}
	svc, err := calendar.NewService(ctx, creds.ClientOptions()...)
	if err != nil {
		res.problems = []problem{{what: fmt.Sprintf("account %s: %v", name, err)}}
		return res
	}
	res.svc, res.OK = svc, true
	return res
}

// calendar checks, once per account and calendar, that the calendar
// exists for the account (calendars.get) and that the account may write
// to it: the account's role comes from an events list (events.list,
// which calendar.events allows), since calendarList.get, which also says
// it, needs a scope calsyncd does not ask for (calendar.readonly or
// calendar.calendarlist.readonly). Nothing is written.
func (c *Checker) calendar(ctx context.Context, account, id string, acct accountResult, key string) calendarResult {
	c.mu.Lock()
	k := [2]string{account, id}
	once, ok := c.calendars[k]
	if !ok {
		once = sync.OnceValue(func() calendarResult { return c.checkCalendar(ctx, id, acct, key) })
		c.calendars[k] = once
	}
	c.mu.Unlock()
	return once()
}

func (c *Checker) checkCalendar(ctx context.Context, id string, acct accountResult, key string) calendarResult {
	res := calendarResult{Calendar: Calendar{ID: id, Writable: WritableCannotTell}}
	who := acct.Identity
	ctx1, cancel := context.WithTimeout(ctx, c.requestTimeout())
	cal, err := acct.svc.Calendars.Get(id).Context(ctx1).Do()
	cancel()
	if err != nil {
		res.problems = []problem{googleProblem(err, "calendar "+id, who, acct.Name, key)}
		return res
	}
	res.Exists, res.Summary, res.TimeZone = true, cal.Summary, cal.TimeZone
	ctx2, cancel := context.WithTimeout(ctx, c.requestTimeout())
	evs, err := acct.svc.Events.List(id).MaxResults(1).Fields("accessRole").Context(ctx2).Do()
	cancel()
	if err != nil {
		res.Writable = WritableNo
		res.problems = []problem{googleProblem(err, "the events of calendar "+id, who, acct.Name, key)}
		return res
	}
	res.AccessRole = evs.AccessRole
	switch evs.AccessRole {
	case "owner", "writer", "writerWithoutPrivateAccess":
		res.Writable = WritableYes
	case "":
		res.notes = []string{"cannot tell whether the account may write to calendar " + id +
			": Google did not say its access role; the first run will show (a refusal is a 403 requiredAccessLevel)"}
	default:
		res.Writable = WritableNo
		res.problems = []problem{{what: fmt.Sprintf("%s may only read calendar %s (access role %s)", who, id, evs.AccessRole),
			do: "share the calendar with the account with the permission \"Make changes to events\""}}
	}
	return res
}

// googleProblem says what Google's refusal of a read means.
func googleProblem(err error, what, who, account, key string) problem {
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the request URL names nothing secret, but is noise
		}
		var aerr *googleauth.Error
		if errors.As(err, &aerr) {
			return problem{what: aerr.Error()}
		}
		return problem{what: "cannot reach Google for " + what + ": " + err.Error(), do: "check the network, or google.endpoint"}
	}
	reason := ""
	if len(gerr.Errors) > 0 {
		reason = gerr.Errors[0].Reason
	}
	answer := fmt.Sprintf("Google answered %s %s: %s", statusText(gerr.Code), reason, gerr.Message)
	switch {
	case gerr.Code == http.StatusNotFound:
		return problem{what: fmt.Sprintf("%s does not exist or is not shared with %s", what, who),
			do: "share the calendar with the account (\"Make changes to events\"), or fix " + key + ".calendar"}
	case gerr.Code == http.StatusUnauthorized:
		return problem{what: "Google refused the access token of account " + account + " (" + answer + ")",
			do: "`calsyncd auth status`; for a person's account, `calsyncd auth login --account " + account + "`"}
	case reason == "insufficientPermissions":
		return problem{what: "the token of account " + account + " lacks calsyncd's scopes (" + answer + ")",
			do: "log in again (`calsyncd auth login`), or grant both scopes to the client in the domain-wide delegation"}
	case gerr.Code == http.StatusForbidden:
		return problem{what: fmt.Sprintf("%s refuses %s (%s)", what, who, answer),
			do: "share the calendar with the account (\"Make changes to events\")"}
	}
	return problem{what: "reading " + what + ": " + answer, do: "try again; if it lasts, see Google's status page"}
}
