package check

import (
	"errors"
	"strings"

	"google.golang.org/api/googleapi"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/fetch"
	"github.com/calsyncd/calsyncd/internal/googleauth"
)

// Advice is what a failure means and what to do about it, in check's
// words: What is wrong, Do what to do ("" when there is nothing better to
// say than What).
type Advice struct {
	What, Do string
	// Calendar: Google refused the subscription's calendar to its account
	// (not found, not shared, a refused token): its writes would fail too.
	Calendar bool
}

// String is the advice as check prints a problem: "what → do".
func (a Advice) String() string { return problem{what: a.What, do: a.Do}.String() }

// Advise explains a failure of one of cfg's subscriptions (a run's, a
// dry-run's, or a read of its calendar) as check explains what it finds:
// a feed that cannot be fetched, Google refusing the calendar or the
// token, credentials that cannot be used, a feed over its limits. It
// names the configuration key to fix and never the feed's secrets (err's
// text never holds them).
func Advise(cfg *config.Config, sub config.Subscription, err error) Advice {
	if err == nil {
		return Advice{}
	}
	key := subscriptionKey(cfg, sub)
	var (
		ferr *fetch.Error
		gerr *googleapi.Error
		aerr *googleauth.Error
	)
	switch {
	case errors.As(err, &ferr):
		p := fetchProblem(err, ferr, key)
		return Advice{What: p.what, Do: p.do}
	case errors.As(err, &aerr):
		// googleauth's errors carry what to do as their hint.
		if aerr.Hint == "" {
			return Advice{What: err.Error()}
		}
		return Advice{What: strings.TrimSuffix(err.Error(), " — "+aerr.Hint), Do: aerr.Hint}
	case errors.As(err, &gerr) && !rateLimited(gerr):
		acct := sub.AccountName()
		p := googleProblem(gerr, "calendar "+sub.Calendar, "account "+acct, acct, key)
		return Advice{What: p.what, Do: p.do, Calendar: gerr.Code == 401 || gerr.Code == 403 || gerr.Code == 404}
	}
	a := Advice{What: err.Error()}
	class := calsyncd.ClassOf(err)
	if gerr != nil {
		class = calsyncd.ClassRateLimited
	}
	switch class {
	case calsyncd.ClassFeedInvalid:
		a.Do = "check " + key + ".url: it does not answer with a calendar (nothing is deleted while it reads like this)"
	case calsyncd.ClassFeedOverLimit:
		a.Do = "narrow the feed with " + key + ".filters or window, or raise limits (max_events, max_instances_expanded, filter_time) for it"
	case calsyncd.ClassAuth:
		a.Do = "`calsyncd auth status`; for a person's account, `calsyncd auth login --account " + sub.AccountName() + "`"
	case calsyncd.ClassRateLimited, calsyncd.ClassUsageLimited:
		a.Do = "Google asks to slow down: runs wait and retry on their own; try again later"
	case calsyncd.ClassTransient:
		a.Do = "try again; if it lasts, see Google's status page"
	}
	return a
}

// rateLimited reports whether Google's 403 is a rate or usage limit
// rather than a refusal of the calendar.
func rateLimited(gerr *googleapi.Error) bool {
	for _, e := range gerr.Errors {
		switch e.Reason {
		case "rateLimitExceeded", "userRateLimitExceeded", "quotaExceeded", "dailyLimitExceeded":
			return true
		}
	}
	return false
}

// subscriptionKey names the subscription's key in the configuration file
// ("subscriptions[2]").
func subscriptionKey(cfg *config.Config, sub config.Subscription) string {
	c := &Checker{Config: cfg}
	return c.configKey(-1, sub)
}
