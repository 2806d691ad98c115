package status

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"sort"
	"strconv"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// Chart geometry, in SVG user units. Every run has a bar at least minBar
// high, whatever it did: a failed run is a full red bar, a run with
// nothing to write a grey stub.
const (
	chartW   = 288
	chartH   = 48
	minBar   = 6
	barSlots = historyLen
	minSlots = 16
)

// segment is one coloured part of a run's bar: class w (written), d
// (deferred), f (writes that failed or were rejected), x (the run
// failed), n (nothing to write).
type segment struct {
	Class string
	Y, H  float64
}

type bar struct {
	X, W     float64
	Outcome  string
	Segments []segment
	Title    string
}

// chartSummary counts what the charted runs did.
type chartSummary struct {
	Runs, Wrote, Deferred, Failed, Nothing int
	Tallest                                int
}

type card struct {
	Subscription
	Bars    []bar
	Summary chartSummary
	Width   int
	Height  int
	// Throttle is the account's throttle window, when Google has one
	// open.
	Throttle *Account
	// Link is the subscription's own page.
	Link string
}

type pageData struct {
	GeneratedAt time.Time
	Zone        string
	Daemon      bool
	Cards       []card
	Accounts    []Account
	Undelivered []UndeliveredAlert
	// Failing, Total and States count every subscription, not only the
	// page's.
	Failing int
	Total   int
	States  []stateCount
	// Prev and Next link the previous and next pages ("": none).
	Prev, Next string
}

type stateCount struct {
	State calsyncd.State
	N     int
}

type detailData struct {
	pageData
	Card card
	Runs []RunDetail
	Kept int
}

// chart lays out a subscription's last runs, oldest first, as bars: the
// successful writes, the deferred ones and the failed ones stacked; a run
// that failed is a full-height red bar, one with nothing to write a grey
// stub, so every run shows.
func chart(runs []Run) ([]bar, chartSummary) {
	sum := chartSummary{Runs: len(runs)}
	for _, r := range runs {
		sum.Tallest = max(sum.Tallest, r.Writes()+r.Deferred+r.Failed+r.Rejected)
	}
	// The newest run is at the right; a short history gets wider bars
	// (as wide as a sixteenth of the chart), a long one a slot of
	// barSlots each.
	slots := min(barSlots, max(len(runs), minSlots))
	slot := float64(chartW) / float64(slots)
	offset := slots - len(runs)
	bars := make([]bar, 0, len(runs))
	for i, r := range runs {
		b := bar{X: float64(offset+i)*slot + slot*0.1, W: slot * 0.8, Outcome: string(r.Outcome)}
		y := float64(chartH)
		add := func(class string, h float64) {
			if h <= 0 {
				return
			}
			y -= h
			b.Segments = append(b.Segments, segment{Class: class, Y: y, H: h})
		}
		failedWrites := r.Failed + r.Rejected
		total := r.Writes() + r.Deferred + failedWrites
		switch {
		case r.Outcome == calsyncd.OutcomeFailed:
			sum.Failed++
			add("x", chartH)
		case total == 0:
			sum.Nothing++
			add("n", minBar)
		default:
			// The bar's height is its share of the tallest, never less
			// than minBar; each kind of write keeps at least a sliver.
			h := max(minBar, float64(total)/float64(sum.Tallest)*chartH)
			part := func(v int) float64 {
				if v == 0 {
					return 0
				}
				return max(2, float64(v)/float64(total)*h)
			}
			add("w", part(r.Writes()))
			add("d", part(r.Deferred))
			add("f", part(failedWrites))
			if r.Writes() > 0 {
				sum.Wrote++
			}
			if r.Deferred > 0 {
				sum.Deferred++
			}
		}
		b.Title = fmt.Sprintf("%s: %s, %d written, %d deferred, %d failed or rejected", zoned(r.StartedAt), r.Outcome,
			r.Writes(), r.Deferred, failedWrites)
		if r.Error != "" {
			b.Title += " — " + r.Error
		}
		bars = append(bars, b)
	}
	return bars, sum
}

func cardOf(s Subscription, accounts []Account, now time.Time) card {
	bars, sum := chart(s.History)
	c := card{Subscription: s, Bars: bars, Summary: sum, Width: chartW, Height: chartH, Link: "/subscriptions/" + url.PathEscape(s.ID)}
	for i := range accounts {
		if a := accounts[i]; a.Name == s.Account && a.ThrottleUntil != nil && a.ThrottleUntil.After(now) {
			c.Throttle = &accounts[i]
		}
	}
	return c
}

func pageOf(rep *Report) pageData {
	d := pageData{GeneratedAt: rep.GeneratedAt, Zone: zoneName(rep.GeneratedAt), Daemon: rep.Daemon, Accounts: rep.Accounts, Undelivered: rep.UndeliveredAlerts,
		Failing: rep.Failing, Total: rep.Total}
	failing := 0
	for _, s := range rep.Subscriptions {
		c := cardOf(s, rep.Accounts, rep.GeneratedAt)
		if s.State == calsyncd.StateError || (s.LastRun != nil && s.LastRun.Outcome == calsyncd.OutcomeFailed) {
			failing++
		}
		d.Cards = append(d.Cards, c)
	}
	if d.Total < len(rep.Subscriptions) {
		// A report not counted by Build: its subscriptions are all there is.
		d.Total, d.Failing = len(rep.Subscriptions), failing
	}
	for st, n := range rep.States {
		d.States = append(d.States, stateCount{State: st, N: n})
	}
	sort.Slice(d.States, func(i, j int) bool { return d.States[i].State < d.States[j].State })
	d.Prev, d.Next = pageLink(rep, "before", rep.PrevBefore), pageLink(rep, "after", rep.NextAfter)
	return d
}

// pageLink is the address of the page before or after id, of the same
// limit ("" when id is).
func pageLink(rep *Report, dir, id string) string {
	if id == "" {
		return ""
	}
	q := url.Values{dir: {id}}
	if rep.Limit != DefaultPageLimit && rep.Limit > 0 {
		q.Set("limit", strconv.Itoa(rep.Limit))
	}
	return "/?" + q.Encode()
}

// RenderPage writes the status page: a card per subscription, those in
// trouble saying what happened and what to do.
func RenderPage(w io.Writer, rep *Report) error {
	return pageTemplate.ExecuteTemplate(w, "page", pageOf(forPeople(rep)))
}

// RenderDetail writes a subscription's page: its card and its recent runs,
// each with what it created, updated and deleted.
func RenderDetail(w io.Writer, d *Detail) error {
	rep := forPeople(&Report{GeneratedAt: d.Report.GeneratedAt, Daemon: d.Report.Daemon, Subscriptions: []Subscription{d.Subscription},
		Accounts: d.Report.Accounts})
	data := detailData{pageData: pageOf(rep), Kept: calsyncd.MaxRunChanges}
	data.Card = data.Cards[0]
	for _, r := range d.Runs {
		r.Run = escRun(r.Run)
		changes := make([]Change, len(r.Changes))
		for i, c := range r.Changes {
			c.Kind, c.UID, c.Title = calsyncd.RunChangeKind(esc(string(c.Kind))), esc(c.UID), esc(c.Title)
			changes[i] = c
		}
		r.Changes = changes
		data.Runs = append(data.Runs, r)
	}
	return pageTemplate.ExecuteTemplate(w, "detail", data)
}

// zoned is a time as the page shows it: in the daemon's zone, named.
func zoned(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.Local().Format("Mon Jan 2 15:04 MST")
}

// zoneName names the daemon's zone, with its offset from UTC at t.
func zoneName(t time.Time) string {
	t = t.Local()
	name, _ := t.Zone()
	loc := t.Location().String()
	if loc == "Local" || loc == name {
		return name + " (UTC" + t.Format("-07:00") + ")"
	}
	return loc + ", " + name + " (UTC" + t.Format("-07:00") + ")"
}

// pageCSS is the pages' one stylesheet. The Content-Security-Policy allows
// it by its hash (pageStyleHash) and forbids every other style and script,
// so the pages have no style attributes. It is laid out for a phone
// first: nothing is wider than the screen.
const pageCSS = `*, *::before, *::after { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; padding: .8rem; max-width: 80rem; color: #222; background: #fafafa; }
h1 { font-size: 1.35rem; margin: 0 0 .2rem; }
h2 { font-size: 1.1rem; margin: 1.4rem 0 .5rem; }
h3 { font-size: 1.05rem; margin: 0; overflow-wrap: anywhere; }
a { color: #0b57d0; }
.meta { color: #555; margin-bottom: .8rem; }
.banner { padding: .5rem .7rem; border-radius: .4rem; margin-bottom: .8rem; font-weight: 600; }
.banner.bad { background: #fdecea; color: #b71c1c; } .banner.good { background: #e6f4ea; color: #1b5e20; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 25rem), 1fr)); gap: .8rem; }
.card { background: #fff; border: 1px solid #ddd; border-left: 5px solid #43a047; border-radius: .5rem; padding: .7rem .8rem; min-width: 0; }
.card.error { border-left-color: #d32f2f; } .card.other { border-left-color: #9e9e9e; }
.head { display: flex; flex-wrap: wrap; gap: .3rem .6rem; align-items: baseline; }
.where { color: #555; font-size: 13px; overflow-wrap: anywhere; margin: .1rem 0 .4rem; }
.state { font-weight: 700; font-size: 12px; padding: .05rem .45rem; border-radius: .25rem; }
.state.active { background: #e3f4e6; color: #1b5e20; } .state.error { background: #fde4e1; color: #b71c1c; } .state.other { background: #eee; color: #444; }
.problem { background: #fdecea; border-radius: .4rem; padding: .45rem .6rem; margin: .4rem 0; overflow-wrap: anywhere; }
.problem .what { font-weight: 600; color: #b71c1c; }
.problem .todo { margin-top: .2rem; }
.pending { background: #fff3e0; border-radius: .4rem; padding: .45rem .6rem; margin: .4rem 0; color: #6d4100; overflow-wrap: anywhere; }
.note { color: #6d4100; font-size: 13px; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .1rem .7rem; margin: .4rem 0; font-size: 14px; }
dl.facts dt { color: #555; } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
svg.chart { display: block; width: 100%; height: auto; max-height: 6rem; margin-top: .4rem; }
svg rect.w { fill: #43a047; } svg rect.d { fill: #fb8c00; } svg rect.f { fill: #e53935; } svg rect.x { fill: #c62828; } svg rect.n { fill: #b0b0b0; }
svg line { stroke: #ccc; }
.caption { color: #555; font-size: 12px; }
.legend { display: flex; flex-wrap: wrap; gap: .2rem .9rem; font-size: 13px; }
.legend span::before { content: ""; display: inline-block; width: .8em; height: .8em; margin-right: .3em; vertical-align: -.05em; border-radius: .1em; }
.legend .lw::before { background: #43a047; } .legend .ld::before { background: #fb8c00; } .legend .lf::before { background: #e53935; }
.legend .lx::before { background: #c62828; } .legend .ln::before { background: #b0b0b0; }
ul.plain { list-style: none; padding: 0; margin: 0; }
ul.plain > li { background: #fff; border: 1px solid #ddd; border-radius: .4rem; padding: .5rem .7rem; margin-bottom: .5rem; overflow-wrap: anywhere; }
ol.runs { list-style: none; padding: 0; margin: 0; }
ol.runs > li { background: #fff; border: 1px solid #ddd; border-left: 5px solid #43a047; border-radius: .4rem; margin-bottom: .5rem; }
ol.runs > li.failed { border-left-color: #d32f2f; } ol.runs > li.deferred, ol.runs > li.partial { border-left-color: #fb8c00; } ol.runs > li.not_modified { border-left-color: #b0b0b0; }
summary { cursor: pointer; padding: .5rem .7rem; }
.run-body { padding: 0 .7rem .6rem; }
.outcome { font-weight: 700; }
ul.changes { list-style: none; padding: 0; margin: .3rem 0; }
ul.changes li { padding: .2rem 0; border-top: 1px solid #eee; overflow-wrap: anywhere; }
.kind { display: inline-block; min-width: 4.6em; font-size: 12px; font-weight: 700; text-transform: uppercase; }
.kind.created { color: #1b5e20; } .kind.updated { color: #0b57d0; } .kind.deleted { color: #b71c1c; }
.muted { color: #666; font-size: 13px; }
nav.pager { display: flex; gap: 1.2rem; margin: .6rem 0; }
`

// pageStyleHash is pageCSS as a CSP source.
var pageStyleHash = func() string {
	sum := sha256.Sum256([]byte(pageCSS))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}()

var pageTemplate = template.Must(template.New("").Funcs(template.FuncMap{
	"at": zoned,
	"when": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return zoned(*t)
	},
	"day": func(c Change) string {
		if c.Start.IsZero() {
			return ""
		}
		if c.AllDay {
			return c.Start.UTC().Format("Mon Jan 2") + " (all day)"
		}
		return zoned(c.Start)
	},
	"took": func(r Run) string {
		if r.FinishedAt == nil {
			return "still running"
		}
		return "took " + r.FinishedAt.Sub(r.StartedAt).Round(time.Second).String()
	},
	"lower": func(s calsyncd.State) string {
		switch s {
		case calsyncd.StateActive:
			return "active"
		case calsyncd.StateError:
			return "error"
		}
		return "other"
	},
	"more": func(r RunDetail) int { return max(0, r.Writes()-len(r.Changes)) },
}).Parse(`
{{define "head"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="60">
<title>{{.}}</title>
<style>` + pageCSS + `</style>
</head>
<body>
{{end}}

{{define "meta"}}<div class="meta">{{if .Daemon}}daemon running{{else}}daemon not running{{end}} · generated {{at .GeneratedAt}} · times are in {{.Zone}}</div>{{end}}

{{define "legend"}}<div class="legend" id="legend"><span class="lw">written</span><span class="ld">deferred</span><span class="lf">writes failed or rejected</span><span class="lx">run failed</span><span class="ln">nothing to write</span></div>{{end}}

{{define "card"}}<section class="card {{lower .State}}" id="sub-{{.ID}}">
<div class="head"><h3><a href="{{.Link}}">{{.ID}}</a></h3><span class="state {{lower .State}}">{{.State}}</span>{{if .ConsecutiveErrors}}<span class="muted">{{.ConsecutiveErrors}} failed in a row</span>{{end}}</div>
<div class="where">{{.Feed}} → {{.Calendar}}{{if .Account}} ({{.Account}}){{end}}</div>
{{with .LastError}}<div class="problem" id="problem-{{$.ID}}"><div class="what">{{.Class}}: {{.Detail}}</div><div class="todo"><strong>What to do:</strong> {{.Message}}</div></div>{{end}}
{{with .LastRun}}{{if .Deferred}}<div class="pending" id="pending-{{$.ID}}"><strong>Pending:</strong> {{.Deferred}} write{{if ne .Deferred 1}}s{{end}} deferred by the last run{{with $.Throttle}}; Google throttles account {{.Name}} ({{.ThrottleClass}}) until {{when .ThrottleUntil}}{{end}}. The next run{{with $.NextRun}} ({{at .}}){{end}} picks them up.</div>{{end}}{{end}}
{{range .Notes}}<div class="note">{{.}}</div>{{end}}
<dl class="facts">
<dt>Last run</dt><dd>{{with .LastRun}}{{at .StartedAt}}: <span class="outcome">{{.Outcome}}</span>{{else}}never{{end}}</dd>
{{with .LastRun}}<dt>It wrote</dt><dd>{{.Created}} created, {{.Updated}} updated, {{.Deleted}} deleted{{if .Deferred}}, {{.Deferred}} deferred{{end}}{{if .Failed}}, {{.Failed}} failed{{end}}{{if .Rejected}}, {{.Rejected}} rejected{{end}}</dd>{{end}}
<dt>Next run</dt><dd>{{when .NextRun}}</dd>
<dt>In Google</dt><dd>{{.EventsMapped}} event{{if ne .EventsMapped 1}}s{{end}}{{if .EventsFiltered}}, {{.EventsFiltered}} filtered out{{end}}</dd>
</dl>
<svg class="chart" role="img" aria-label="last runs of {{.ID}}" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" preserveAspectRatio="none">
<line x1="0" y1="{{.Height}}" x2="{{.Width}}" y2="{{.Height}}"/>
{{range .Bars}}<g class="run {{.Outcome}}"><title>{{.Title}}</title>{{$b := .}}{{range .Segments}}<rect class="{{.Class}}" x="{{printf "%.1f" $b.X}}" y="{{printf "%.1f" .Y}}" width="{{printf "%.1f" $b.W}}" height="{{printf "%.1f" .H}}"/>{{end}}</g>
{{end}}</svg>
<div class="caption">{{with .Summary}}{{if .Runs}}last {{.Runs}} run{{if ne .Runs 1}}s{{end}}, oldest left: {{.Wrote}} wrote, {{.Deferred}} deferred, {{.Failed}} failed, {{.Nothing}} had nothing to write{{if .Tallest}}; the tallest bar is {{.Tallest}} write{{if ne .Tallest 1}}s{{end}}{{end}}{{else}}no run recorded yet{{end}}{{end}} · <a href="{{.Link}}">runs and what they changed</a></div>
</section>
{{end}}

{{define "pager"}}{{if or .Prev .Next}}<nav class="pager">{{if .Prev}}<a href="{{.Prev}}" rel="prev">← previous</a>{{end}}{{if .Next}}<a href="{{.Next}}" rel="next">next →</a>{{end}}</nav>{{end}}{{end}}

{{define "accounts"}}<h2>Google accounts</h2>
<ul class="plain" id="accounts">
{{range .Accounts}}<li><strong>{{.Name}}</strong>: writes spaced {{.SpacingMS}} ms; {{if .ThrottleUntil}}<span class="note">writes deferred until {{when .ThrottleUntil}} ({{.ThrottleClass}})</span>{{else}}not throttled{{end}}{{with .Lease}}; worked on by {{.Owner}} {{if .Expired}}(lease expired){{else}}(lease until {{at .ExpiresAt}}){{end}}{{end}}</li>
{{end}}</ul>
{{end}}

{{define "page"}}{{template "head" "calsyncd status"}}<h1>calsyncd</h1>
{{template "meta" .}}
{{if .Failing}}<div class="banner bad" id="banner">{{.Failing}} subscription{{if ne .Failing 1}}s{{end}} in trouble: see below what happened and what to do</div>{{else}}<div class="banner good" id="banner">every subscription is syncing</div>{{end}}
{{template "legend"}}
<h2>Subscriptions</h2>
<div class="meta" id="totals">{{.Total}} subscription{{if ne .Total 1}}s{{end}}{{range .States}} · {{.N}} {{.State}}{{end}} · {{.Failing}} in trouble{{if or .Prev .Next}} · this page shows {{len .Cards}}, by id{{end}}</div>
{{template "pager" .}}
<div class="cards" id="subscriptions">
{{range .Cards}}{{template "card" .}}{{end}}</div>
{{template "pager" .}}
{{if .Undelivered}}<h2>Alerts not delivered</h2>
<ul class="plain" id="undelivered">
{{range .Undelivered}}<li>the {{.Condition}} alert for {{.Subject}} reached no webhook (since {{at .Since}}, last tried {{at .LastTried}}); the next run that sees it sends it again</li>
{{end}}</ul>
{{end}}{{template "accounts" .}}</body>
</html>
{{end}}

{{define "detail"}}{{template "head" (printf "calsyncd: %s" .Card.ID)}}<h1><a href="/">calsyncd</a> › {{.Card.ID}}</h1>
{{template "meta" .}}
{{template "legend"}}
<div class="cards">{{template "card" .Card}}</div>
<h2>Recent runs, newest first</h2>
{{if .Runs}}<ol class="runs" id="runs">
{{range $i, $r := .Runs}}<li class="{{.Outcome}}" id="run-{{.ID}}"><details{{if eq $i 0}} open{{end}}>
<summary><strong>{{at .StartedAt}}</strong> · <span class="outcome">{{.Outcome}}</span> · {{.Created}} created, {{.Updated}} updated, {{.Deleted}} deleted{{if .Deferred}}, {{.Deferred}} deferred{{end}}{{if .Failed}}, {{.Failed}} failed{{end}}{{if .Rejected}}, {{.Rejected}} rejected{{end}}</summary>
<div class="run-body">
<div class="muted">run {{.ID}}, {{took .Run}}{{if .Unchanged}}; {{.Unchanged}} unchanged{{end}}{{if .Filtered}}; {{.Filtered}} filtered out{{end}}{{if .HeldDeletes}}; {{.HeldDeletes}} deletes held{{end}}</div>
{{if .Error}}<div class="problem"><div class="what">{{.ErrorClass}}: {{.Error}}</div></div>{{end}}
{{if .Changes}}<ul class="changes">
{{range .Changes}}<li><span class="kind {{.Kind}}">{{.Kind}}</span> {{if .Title}}<strong>{{.Title}}</strong>{{else}}<span class="muted">event {{.UID}}</span>{{end}}{{with day .}} · {{.}}{{end}}</li>
{{end}}</ul>
{{with more .}}<div class="muted">and {{.}} more: a run keeps its first {{$.Kept}} changes</div>{{end}}
{{else if .Writes}}<div class="muted">the changes of this run were not kept</div>{{else}}<div class="muted">nothing written</div>{{end}}
</div></details></li>
{{end}}</ol>
{{else}}<p class="muted">No run recorded yet.</p>{{end}}
{{template "accounts" .}}</body>
</html>
{{end}}
`))
