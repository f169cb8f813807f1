package service

import (
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"
)

//go:embed openapi.json
var openAPIDoc []byte

func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPIDoc)
}

// The status page shows public quantities only: each experiment's public parameters and
// guarantee, users served, capacity, the release history (policy versions), and the regret
// curve simulated clients reported. It is rendered on the server (no build step, no script).
var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"pct": func(a, b int) string {
		if b == 0 {
			return "0"
		}
		return fmt.Sprintf("%.1f", 100*float64(a)/float64(b))
	},
	"svg":  regretSVG,
	"when": func(t time.Time) string { return t.Format("2006-01-02 15:04 MST") },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dprl serve</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:64em;color:#222;padding:0 1em}
h1{font-size:1.5em} h2{font-size:1.15em;margin-top:2em}
table{border-collapse:collapse} td,th{padding:.2em .8em;text-align:left;border-bottom:1px solid #ddd}
.note{color:#666;font-size:.9em} .warn{background:#fee;border:1px solid #c00;padding:.5em}
.bar{background:#eee;width:20em;height:.8em;display:inline-block} .bar span{background:#36c;height:100%;display:block}
</style></head><body>
<h1>dprl serve</h1>
<p class="note">Private exploration for real users. This page shows only public quantities: public parameters, the guarantee, counts and published policy versions. Up {{.Uptime}}.</p>
{{if .Storage}}<p class="warn" id="storage">{{.Storage}}</p>{{else}}<p class="note" id="storage">Storage: commits succeed.</p>{{end}}
{{if .Seeded}}<p class="warn" id="seeded">SEEDED TEST MODE: experiments created with a seed draw their noise from it. Never serve real users in this mode.</p>{{end}}
{{if not .Experiments}}<p id="empty">No experiment yet. Create one with <code>POST /v1/experiments</code> (the admin token) — see <a href="/v1/openapi.json">the API</a>.</p>{{end}}
{{range .Experiments}}
<section class="experiment" id="exp-{{.Experiment}}">
<h2>{{.Experiment}} — {{.Family}} / {{.Agent}}</h2>
{{if not .Private}}<p class="warn nonprivate">NON-PRIVATE: this experiment gives no privacy guarantee. Its curator computes what it releases from its users' raw data.</p>{{end}}
{{if .Simulation}}<p class="note simulation">SIMULATION: created for simulated users (dprl client simulate); its regret curve is theirs.</p>{{end}}
<table>
<tr><th>guarantee</th><td class="guarantee">{{.Statement}}</td></tr>
<tr><th>ε, δ</th><td class="eps">{{if .Private}}ε = {{.Epsilon}}, δ = {{.Delta}}{{if .Mu}} (μ = {{printf "%.4g" .Mu}} GDP){{end}}{{else}}NON-PRIVATE{{end}}</td></tr>
<tr><th>reports</th><td>{{.Kind}}{{if not .Private}} (NON-PRIVATE: no guarantee){{else if eq .Kind "privatized"}} (local DP: raw data never leaves the user){{else}} (joint DP: the curator sees trajectories; everything it releases is private){{end}}</td></tr>
<tr><th>users served</th><td><span class="users">{{.UsersServed}}</span> of <span class="capacity">{{.Capacity}}</span> <span class="bar"><span style="width:{{pct .UsersServed .Capacity}}%"></span></span></td></tr>
<tr><th>policy version</th><td class="version">{{.PolicyVersion}} ({{len .Releases}} versions recorded)</td></tr>
<tr><th>created</th><td>{{when .Created}}{{if .Seeded}} — seeded test mode{{end}}</td></tr>
</table>
{{if .Simulated}}<h3>Regret of simulated users</h3>{{svg .Simulated}}<p class="note">Cumulative exact regret reported by simulated clients (dprl client simulate); real users report none.</p>{{end}}
<details><summary>Release history (policy versions)</summary><table><tr><th>version</th><th>published after user</th></tr>
{{range .Releases}}<tr><td>{{.Version}}</td><td>{{.Users}}</td></tr>{{end}}</table></details>
</section>
{{end}}
<p class="note"><a href="/v1/openapi.json">API (OpenAPI 3)</a> · <a href="/metrics">metrics</a> · <a href="/healthz">health</a></p>
</body></html>
`))

type pageData struct {
	Experiments []ledgerResponse
	Seeded      bool
	Uptime      string
	// Storage is the storage failure line (empty while commits succeed).
	Storage string
}

func (s *Server) statusPage(w http.ResponseWriter, _ *http.Request) {
	d := pageData{Seeded: s.cfg.Seeded, Uptime: time.Since(s.started).Round(time.Second).String(), Storage: s.storageLine()}
	for _, x := range s.all() {
		d.Experiments = append(d.Experiments, x.snapshot())
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	if err := pageTmpl.Execute(w, d); err != nil {
		s.cfg.Logf("status page: %v", err)
	}
}

// regretSVG draws a cumulative regret curve as an inline SVG polyline (public numbers only).
func regretSVG(pts []curvePoint) template.HTML {
	const W, H = 480.0, 200.0
	maxX, maxY := 1.0, 1e-12
	for _, p := range pts {
		maxX, maxY = max(maxX, float64(p.Users)), max(maxY, p.Cum)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="regret" width="%g" height="%g" viewBox="-40 -10 %g %g" role="img" aria-label="cumulative regret against users">`, W+50, H+30, W+50, H+30)
	fmt.Fprintf(&b, `<line x1="0" y1="%g" x2="%g" y2="%g" stroke="#999"/><line x1="0" y1="0" x2="0" y2="%g" stroke="#999"/>`, H, W, H, H)
	fmt.Fprintf(&b, `<text x="-36" y="8" font-size="10">%.3g</text><text x="%g" y="%g" font-size="10">%d users</text>`, maxY, W-50, H+14, int(maxX))
	b.WriteString(`<polyline fill="none" stroke="#36c" stroke-width="1.5" points="`)
	for _, p := range pts {
		fmt.Fprintf(&b, "%.1f,%.1f ", W*float64(p.Users)/maxX, H-H*p.Cum/maxY)
	}
	b.WriteString(`"/></svg>`)
	return template.HTML(b.String())
}
