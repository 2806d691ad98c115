package check

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/feed"
	"github.com/calsyncd/calsyncd/internal/fetch"
)

// feed fetches the subscription's feed once, in full (no validators), and
// parses it as a run would.
func (c *Checker) feed(ctx context.Context, sub config.Subscription, key string) (Feed, []problem, []string) {
	f := Feed{URL: config.RedactURL(sub.URL), Skipped: []Skip{}, UnresolvedZones: []string{}}
	req := fetch.Request{URL: sub.URL, Headers: sub.Headers}
	if a := sub.BasicAuth; a != nil {
		req.BasicAuth = &fetch.BasicAuth{Username: a.Username, Password: a.Password}
	}
	resp, err := c.Fetcher.Fetch(ctx, req)
	if err != nil {
		var ferr *fetch.Error
		if errors.As(err, &ferr) {
			f.Status = ferr.StatusCode
		}
		return f, []problem{fetchProblem(err, ferr, key)}, nil
	}
	if scheme := strings.ToLower(strings.SplitN(sub.URL, ":", 2)[0]); scheme != "file" {
		f.Status = http.StatusOK // the fetcher takes nothing else (no validators were sent)
	}
	f.Bytes = len(resp.Body)
	win := c.Config.EffectiveWindow(sub)
	cal, err := feed.ParseBytes(resp.Body, feed.Options{DefaultZone: c.Config.EffectiveTimeZone(sub), Identity: feed.Identity(sub.Identity),
		WindowPast: win.PastReach(), WindowFuture: win.Future.D(), Now: c.now()})
	if err != nil {
		return f, []problem{{what: "the feed is not a calendar: " + err.Error(), do: "check " + key + ".url"}}, nil
	}
	f.Events, f.OutsideWindow, f.Warnings = len(cal.Events), cal.OutsideWindow, len(cal.Warnings)
	for _, w := range cal.Warnings {
		if w.Skipped() {
			f.SkippedTotal++
			if len(f.Skipped) < MaxSkips {
				f.Skipped = append(f.Skipped, Skip{UID: w.UID, Reason: w.Message})
			}
		}
		if z, ok := w.Zone(); ok {
			f.UnresolvedZones = append(f.UnresolvedZones, z)
		}
	}
	var notes []string
	if n := f.SkippedTotal; n > MaxSkips {
		notes = append(notes, fmt.Sprintf("%s of the feed skipped (--json lists the first %d with their reasons); the others are synced", plural(n, "event"), MaxSkips))
	} else if n > 0 {
		notes = append(notes, fmt.Sprintf("%s of the feed skipped (--json lists each with its reason); the others are synced", plural(n, "event")))
	}
	if len(f.UnresolvedZones) > 0 {
		notes = append(notes, fmt.Sprintf("no IANA zone found for %s: those times are read as the feed's floating zone or with the feed's own rules; "+
			"set %s.time_zone if they come out wrong", strings.Join(quoteAll(f.UnresolvedZones), ", "), key))
	}
	if f.Events == 0 {
		notes = append(notes, "the feed has no events within the sync window (window.past, window.future)")
	}
	return f, nil, notes
}

// fetchProblem says what a failed fetch means and what to do about it.
func fetchProblem(err error, ferr *fetch.Error, key string) problem {
	p := problem{what: err.Error()}
	if ferr == nil {
		return p
	}
	if ferr.Path != "" {
		p.do = fileAdvice(ferr)
		return p
	}
	switch ferr.Kind {
	case fetch.Unreachable:
		p.do = "check the host name, the network and TLS from this machine (e.g. curl -I on the feed's scheme and host)"
	case fetch.Rejected:
		p.do = "see " + key + " (url, headers, basic_auth)"
	case fetch.Unavailable:
		p.do = "the feed server is failing or asks to wait; runs retry on their own, but this one would fail: try again later"
	case fetch.TooLarge:
		p.do = "raise feed.max_size if the feed really is this large"
	case fetch.Invalid:
		p.do = "see " + key + " (url, headers, basic_auth); nothing is deleted while the feed answers like this"
	}
	return p
}

// fileAdvice is what to do about a file:// feed that could not be read.
func fileAdvice(ferr *fetch.Error) string {
	switch ferr.Kind {
	case fetch.TooLarge:
		return "raise feed.max_size if the file really is this large"
	case fetch.Invalid:
		return "the file is not a whole calendar: check what writes it (nothing is deleted while it reads like this)"
	}
	return "check that " + ferr.Path + " exists and that the service's user can read it; the systemd unit hides /home, /root (ProtectHome=) and " +
		"other users' /tmp (PrivateTmp=): keep file feeds under /srv or /var/lib/calsyncd"
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
