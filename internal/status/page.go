package status

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
)

// Chart geometry, in SVG user units.
const (
	chartW   = 288
	chartH   = 48
	barSlots = historyLen
)

type bar struct {
	X, W             float64
	WritesY, WritesH float64
	DeferY, DeferH   float64
	FailY, FailH     float64
	Title            string
}

type pageRow struct {
	Subscription
	Bars     []bar
	MaxLabel int
	Width    int
	Height   int
}

type pageData struct {
	GeneratedAt string
	Daemon      bool
	Rows        []pageRow
	Accounts    []Account
	Undelivered []UndeliveredAlert
}

// chart lays out a subscription's last runs as stacked bars: successful
// writes, deferred writes and failed ones, so a throttled night stands out.
func chart(runs []Run) ([]bar, int) {
	maxV := 1
	for _, r := range runs {
		maxV = max(maxV, r.Writes()+r.Deferred+r.Failed+r.Rejected)
	}
	slot := float64(chartW) / barSlots
	offset := barSlots - len(runs)
	bars := make([]bar, 0, len(runs))
	for i, r := range runs {
		scale := func(v int) float64 { return float64(v) / float64(maxV) * chartH }
		wh, dh, fh := scale(r.Writes()), scale(r.Deferred), scale(r.Failed+r.Rejected)
		b := bar{X: float64(offset+i) * slot, W: slot * 0.8}
		b.WritesY, b.WritesH = chartH-wh, wh
		b.DeferY, b.DeferH = chartH-wh-dh, dh
		b.FailY, b.FailH = chartH-wh-dh-fh, fh
		b.Title = fmt.Sprintf("%s: %s, %d written, %d deferred, %d failed or rejected", r.StartedAt.Local().Format("Jan 2 15:04"),
			r.Outcome, r.Writes(), r.Deferred, r.Failed+r.Rejected)
		bars = append(bars, b)
	}
	return bars, maxV
}

// RenderPage writes the status page.
func RenderPage(w io.Writer, rep *Report) error {
	rep = forPeople(rep)
	d := pageData{GeneratedAt: rep.GeneratedAt.Local().Format(time.DateTime), Daemon: rep.Daemon, Accounts: rep.Accounts, Undelivered: rep.UndeliveredAlerts}
	for _, s := range rep.Subscriptions {
		bars, maxV := chart(s.History)
		d.Rows = append(d.Rows, pageRow{Subscription: s, Bars: bars, MaxLabel: maxV, Width: chartW, Height: chartH})
	}
	return pageTemplate.Execute(w, d)
}

// pageCSS is the page's one stylesheet. The Content-Security-Policy allows
// it by its hash (pageStyleHash) and forbids every other style and script,
// so the page has no style attributes.
const pageCSS = `body { font: 13px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #222; }
h1 { font-size: 1.3rem; margin: 0 0 .2rem; }
.meta { color: #666; margin-bottom: 1rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #ddd; vertical-align: top; }
th { font-weight: 600; background: #f6f6f6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.when { white-space: nowrap; }
.state { font-weight: 600; padding: .1rem .4rem; border-radius: .25rem; }
.state.active { background: #e3f4e6; color: #1b5e20; }
.state.error { background: #fde4e1; color: #b71c1c; }
.note { color: #8a5a00; font-size: 12px; }
.err { color: #b71c1c; font-size: 12px; }
svg rect.w { fill: #43a047; } svg rect.d { fill: #fb8c00; } svg rect.f { fill: #e53935; }
svg line { stroke: #ccc; }
.legend span { display: inline-block; width: .8em; height: .8em; margin: 0 .2em 0 .8em; vertical-align: middle; }
.legend .lw { background: #43a047; } .legend .ld { background: #fb8c00; } .legend .lf { background: #e53935; }
td.sub { max-width: 22rem; }
h2 { font-size: 1.1rem; margin-top: 1.5rem; }
`

// pageStyleHash is pageCSS as a CSP source.
var pageStyleHash = func() string {
	sum := sha256.Sum256([]byte(pageCSS))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}()

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"at": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.Local().Format("Jan 2 15:04:05")
	},
	"when": func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return "—"
		}
		return t.Local().Format("Jan 2 15:04:05")
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
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="60">
<title>calsyncd status</title>
<style>` + pageCSS + `</style>
</head>
<body>
<h1>calsyncd</h1>
<div class="meta">{{if .Daemon}}daemon running{{else}}daemon not running{{end}} · generated {{.GeneratedAt}} ·
<span class="legend"><span class="lw"></span>written<span class="ld"></span>deferred<span class="lf"></span>failed or rejected</span></div>
<table id="subscriptions">
<thead><tr><th>Subscription</th><th>State</th><th>Last run</th><th class="num" title="created / updated / deleted">Written<br><small>new / upd / del</small></th><th class="num">Deferred</th><th class="num">Failed</th><th class="num">Rejected</th><th class="num">Mapped</th><th>Next run</th><th>Last 48 runs</th></tr></thead>
<tbody>
{{range .Rows}}<tr id="sub-{{.ID}}">
<td class="sub"><strong>{{.ID}}</strong><br><small>{{.Feed}} → {{.Calendar}}</small>
{{range .Notes}}<div class="note">{{.}}</div>{{end}}
{{with .LastError}}<div class="err">{{.Class}}: {{.Message}}</div>{{end}}</td>
<td><span class="state {{lower .State}}">{{.State}}</span>{{if .ConsecutiveErrors}}<br><small>{{.ConsecutiveErrors}} failed in a row</small>{{end}}</td>
{{with .LastRun}}<td class="when">{{when .FinishedAt}}<br><small>{{.Outcome}}</small></td><td class="num">{{.Created}} / {{.Updated}} / {{.Deleted}}</td><td class="num">{{.Deferred}}</td><td class="num">{{.Failed}}</td><td class="num">{{.Rejected}}</td>
{{else}}<td>never</td><td class="num">—</td><td class="num">—</td><td class="num">—</td><td class="num">—</td>{{end}}
<td class="num">{{.EventsMapped}}{{if .EventsFiltered}}<br><small>{{.EventsFiltered}} filtered out</small>{{end}}</td>
<td class="when">{{when .NextRun}}</td>
<td><svg role="img" aria-label="last runs of {{.ID}}" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}">
<line x1="0" y1="{{.Height}}" x2="{{.Width}}" y2="{{.Height}}"/>
{{range .Bars}}<g><title>{{.Title}}</title><rect class="w" x="{{printf "%.1f" .X}}" y="{{printf "%.1f" .WritesY}}" width="{{printf "%.1f" .W}}" height="{{printf "%.1f" .WritesH}}"/><rect class="d" x="{{printf "%.1f" .X}}" y="{{printf "%.1f" .DeferY}}" width="{{printf "%.1f" .W}}" height="{{printf "%.1f" .DeferH}}"/><rect class="f" x="{{printf "%.1f" .X}}" y="{{printf "%.1f" .FailY}}" width="{{printf "%.1f" .W}}" height="{{printf "%.1f" .FailH}}"/></g>
{{end}}</svg><br><small>tallest bar: {{.MaxLabel}} writes</small></td>
</tr>
{{end}}</tbody>
</table>
{{if .Undelivered}}<h2>Alerts not delivered</h2>
<ul id="undelivered">
{{range .Undelivered}}<li>the {{.Condition}} alert for {{.Subject}} reached no webhook (since {{at .Since}}, last tried {{at .LastTried}}); the next run that sees it sends it again</li>
{{end}}</ul>
{{end}}<h2>Google accounts</h2>
<table id="accounts">
<thead><tr><th>Account</th><th class="num">Pacer spacing</th><th>Throttle window</th><th>Replica</th></tr></thead>
<tbody>
{{range .Accounts}}<tr><td>{{.Name}}</td><td class="num">{{.SpacingMS}} ms</td><td>{{if .ThrottleUntil}}writes deferred until {{when .ThrottleUntil}} ({{.ThrottleClass}}){{else}}none{{end}}</td><td>{{with .Lease}}{{.Owner}} {{if .Expired}}(lease expired){{else}}until {{.ExpiresAt.Local.Format "15:04:05"}}{{end}}{{else}}—{{end}}</td></tr>
{{end}}</tbody>
</table>
</body>
</html>
`))
