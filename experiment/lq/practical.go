package lq

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"runtime"
	"strings"

	"gonum.org/v1/plot/vg"

	agents "github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/internal/cfgfile"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/bounds"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/report"
)

//go:embed configs/practical-lq.yaml
var practicalEmbedded []byte

// PracticalVersion is the output format of the practical reproduction.
const PracticalVersion = "practical-lq-1"

// PracticalExpConfig is the configuration of `dprl reproduce practical-lq`
// (experiment/lq/configs/practical-lq.yaml).
type PracticalExpConfig struct {
	// Setup holds the keys name, system, episodes (K of the practical agents) and seeds.
	Setup          `yaml:",inline"`
	PaperEpisodes  int       `yaml:"paper_episodes" json:"paper_episodes"`
	OFUEpisodes    int       `yaml:"ofu_episodes" json:"ofu_episodes"`
	Delta          float64   `yaml:"delta" json:"delta"`
	Epsilons       []float64 `yaml:"epsilons" json:"epsilons"`
	Budget         float64   `yaml:"budget" json:"budget"`
	BatchEvery     int       `yaml:"batch_every" json:"batch_every"`
	Counter        string    `yaml:"counter" json:"counter"`
	Confidence     float64   `yaml:"confidence" json:"confidence"`
	References     int       `yaml:"references" json:"references"`
	TheoryEpsilons []float64 `yaml:"theory_epsilons" json:"theory_epsilons"`
	Search         Search    `yaml:"search" json:"search"`
	ReportAt       []int     `yaml:"report_at" json:"report_at"`
	LongSeeds      []uint64  `yaml:"long_seeds" json:"long_seeds,omitempty"`
	// Long (`dprl reproduce practical-lq --long`, or long: true in a sweep configuration)
	// runs the long seeds.
	Long bool `yaml:"long,omitempty" json:"-"`
	// Agents optionally selects the agents to run (AgentNames; the shared run schema,
	// PlanSpec): each runs its curves of the reproduction (practical-ofu-rl and private-ofu-rl
	// at every ε of epsilons, practical-ofu-rl-theory at every ε of theory_epsilons, the
	// noise-off twin and ofu-rl once). Omitted: every agent, as the reproduction.
	Agents []string `yaml:"agents,omitempty" json:"agents,omitempty"`
}

// runs reports whether the configuration runs agent (Agents, or every agent when omitted).
func (c *PracticalExpConfig) runs(agent string) bool {
	if len(c.Agents) == 0 {
		return true
	}
	for _, a := range c.Agents {
		if a == agent {
			return true
		}
	}
	return false
}

// DefaultPracticalExpConfig returns the embedded configuration.
func DefaultPracticalExpConfig() (*PracticalExpConfig, error) {
	return ParsePracticalExpConfig(practicalEmbedded)
}

// ParsePracticalExpConfig decodes (strictly: unknown fields, duplicate keys and a second
// document are errors) and validates a configuration. The fields whose zero value means the
// agent's default (budget, counter, references) may be omitted but not set to zero.
func ParsePracticalExpConfig(data []byte) (*PracticalExpConfig, error) {
	c := &PracticalExpConfig{}
	return cfgfile.Parse(data, c, "practical-lq: parsing config", func(keys cfgfile.Keys) error {
		return keys.RejectExplicitZeros(append(c.explicitZeros(),
			cfgfile.Default{Path: "budget", Value: c.Budget, Allowed: "in (0, H((1+γ)²+1)] (omit it for the theory budget)"},
			cfgfile.Default{Path: "counter", Value: c.Counter, Allowed: "a counter name (default blt)"},
			cfgfile.Default{Path: "references", Value: c.References, Allowed: "in [1, 64] (default 4)"})...)
	}, c.Validate)
}

// Validate checks every field and names the offending one with its allowed range.
func (c *PracticalExpConfig) Validate() error {
	if err := c.check(2); err != nil {
		return err
	}
	for _, e := range []struct {
		f string
		v int
	}{{"paper_episodes", c.PaperEpisodes}, {"ofu_episodes", c.OFUEpisodes}} {
		if e.v < 0 || e.v > bounds.MaxEpisodes {
			return fmt.Errorf("%s: must be in [2, %d] (0 skips the paper's agents), got %d", e.f, bounds.MaxEpisodes, e.v)
		}
	}
	if len(c.LongSeeds) > bounds.MaxSeeds {
		return fmt.Errorf("long_seeds: at most %d seeds, got %d", bounds.MaxSeeds, len(c.LongSeeds))
	}
	if len(c.Agents) > len(AgentNames()) {
		return fmt.Errorf("agents: at most %d agents, got %d", len(AgentNames()), len(c.Agents))
	}
	picked := map[string]bool{}
	for i, a := range c.Agents {
		r, known := lookupAgent(a)
		switch {
		case !known:
			return fmt.Errorf("agents[%d]: unknown agent %q (allowed: %s)", i, a, strings.Join(AgentNames(), ", "))
		case picked[a]:
			return fmt.Errorf("agents[%d]: agent %q listed twice", i, a)
		case c.episodes(r) == 0:
			return fmt.Errorf("agents[%d]: %s needs %s > 0", i, a, r.EpisodesField)
		case r.Private && r.EpsilonsField != "epsilons" && len(c.epsilons(r)) == 0:
			return fmt.Errorf("agents[%d]: %s needs %s", i, a, r.EpsilonsField)
		}
		picked[a] = true
	}
	// epsilons are required unless the selected agents do not use them.
	needEps := false
	for _, r := range agentTable {
		needEps = needEps || (r.Private && r.EpsilonsField == "epsilons" && c.runs(r.Name) && c.episodes(r) > 0)
	}
	if (len(c.Epsilons) == 0 && needEps) || len(c.Epsilons) > 64 {
		return fmt.Errorf("epsilons: must list 1 to 64 values, got %d", len(c.Epsilons))
	}
	if len(c.TheoryEpsilons) > 64 {
		return fmt.Errorf("theory_epsilons: at most 64 values, got %d", len(c.TheoryEpsilons))
	}
	for i, e := range append(append([]float64(nil), c.Epsilons...), c.TheoryEpsilons...) {
		if !(e > 0) || math.IsInf(e, 0) {
			return fmt.Errorf("epsilons: each must be finite and > 0, got %v", e)
		}
		if err := bounds.Epsilon(fmt.Sprintf("epsilons[%d] (with theory_epsilons)", i), e); err != nil {
			return err
		}
		if _, err := agents.NewPracticalCurator(agents.Public{N: 2, D: 1, H: 10, Gamma: 0.3, Cw: 0.2}, c.agent(e, 2), nil); err != nil {
			return err
		}
	}
	for _, k := range c.ReportAt {
		if k < 1 {
			return fmt.Errorf("report_at: entries must be >= 1, got %d", k)
		}
	}
	// Every (agent, ε) curve keeps its cumulative regret for every seed and episode.
	seeds := len(c.Seeds)
	if c.Long && len(c.LongSeeds) > 0 {
		seeds = len(c.LongSeeds)
	}
	if err := bounds.Stored(2*len(c.Epsilons)+len(c.TheoryEpsilons)+2, seeds, c.Episodes); err != nil {
		return err
	}
	// system is lq-e1 or a system file (model/lq format), loaded when planned.
	return nil
}

// agent returns the practical agent configuration at ε for K episodes.
func (c *PracticalExpConfig) agent(eps float64, K int) agents.PracticalConfig {
	a := agents.DefaultPracticalConfig(eps, K)
	a.Delta, a.Budget, a.BatchEvery, a.Counter = c.Delta, c.Budget, c.BatchEvery, c.Counter
	a.Confidence, a.References = c.Confidence, c.References
	a.Search.NumRandomStarts, a.Search.MaxIter = c.Search.RandomStarts, c.Search.MaxIter
	return a
}

// PracticalCurve is one curve of the practical reproduction.
type PracticalCurve struct {
	Label string `json:"label"`
	// Agent is a row of the agent table (practical-ofu-rl, practical-ofu-rl-theory,
	// practical-ofu-rl-noise-off, private-ofu-rl (the paper's) or ofu-rl (non-private, the
	// paper's)).
	Agent   string  `json:"agent"`
	Epsilon float64 `json:"-"`
	EpsText string  `json:"epsilon"`
	// Guarantee is the accountant's statement; Privacy the report in the one privacy type
	// (the ledger's, for dprl's practical agents and the paper's alike).
	Guarantee string             `json:"guarantee"`
	Privacy   ledger.Report      `json:"-"`
	Episodes  int                `json:"episodes"`
	Runs      []PracticalSeedRun `json:"runs"`
	// Growth is the growth exponent of the mean R(k) over the last decade of k (null if
	// undefined); Undefined says why.
	Growth rundir.Number `json:"growth_exponent_last_decade"`
	// GrowthTheory is the paper's exponent of the agent (its row); null without a theorem.
	GrowthTheory rundir.Number    `json:"growth_exponent_theory"`
	Undefined    rundir.Undefined `json:"undefined,omitempty"`
	band         report.Band
	private      bool
}

// PracticalSeedRun is one (curve, seed) run.
type PracticalSeedRun struct {
	Seed uint64 `json:"seed"`
	// Final = R(K); FirstOffZero the first k with |R(k) − Z(k)| > 1e−9·Z(k) (0: never).
	Final        float64 `json:"final_regret"`
	FirstOffZero int     `json:"first_episode_off_zero_line"`
	// Diag holds the agent's diagnostics (practical or paper agents).
	Diag    any     `json:"diagnostics"`
	Seconds float64 `json:"seconds"`
	cum     []float64
}

// PracticalResult is the whole practical reproduction.
type PracticalResult struct {
	Config *PracticalExpConfig `json:"config"`
	// System is the system's name (LQ-E1 or a system file's), for the summary and figure.
	System  string           `json:"-"`
	Long    bool             `json:"long"`
	Seeds   []uint64         `json:"seeds"`
	Curves  []PracticalCurve `json:"curves"`
	Zero    []float64        `json:"-"`
	Workers int              `json:"workers"`
	Seconds float64          `json:"wall_seconds"`
	// Goals are the issue-13 goal checks for LQ-E1 at ε = 1.
	Goals []string `json:"goals"`
}

// RunPracticalExp runs the practical reproduction (long: the long seeds) through the engine,
// in memory (every (curve, seed) unit), without writing files. Results do not depend on
// workers: each unit derives all its randomness from its seed.
func RunPracticalExp(ctx context.Context, cfg *PracticalExpConfig, long bool, workers int, progress func(done, total int64)) (*PracticalResult, error) {
	c := *cfg
	c.Long = long
	pl, err := PlanPractical(&c)
	if err != nil {
		return nil, err
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return engine.RunResult(ctx, pl, engine.Local{Workers: workers, Progress: progress}, (*practicalPlan).result)
}

// finish computes each curve's band and growth exponent, and the goals.
func (r *PracticalResult) finish() error {
	for i := range r.Curves {
		c := &r.Curves[i]
		runs := make([][]float64, len(c.Runs))
		for j, s := range c.Runs {
			runs[j] = s.cum
		}
		b, err := report.MeanBand(runs, 0.95)
		if err != nil {
			return err
		}
		c.band = b
		xs := make([]float64, c.Episodes)
		for k := range xs {
			xs[k] = float64(k + 1)
		}
		g, gerr := report.GrowthExponent(xs, b.Mean, float64(c.Episodes)/10, float64(c.Episodes))
		c.Growth = rundir.Number(g)
		c.GrowthTheory = row(c.Agent).Theory.Number(&c.Undefined, "growth_exponent_theory")
		if gerr != nil {
			c.Growth = c.Undefined.Set("growth_exponent_last_decade", math.NaN(), "undefined: "+gerr.Error())
		}
	}
	r.Goals = r.goals()
	return nil
}

// goals evaluates the issue-13 LQ goal on the practical-ofu-rl curve at ε = 1: every seed
// leaves the zero-control line before k = 2·10⁴, and R(10⁵) < Z(10⁵) (mean and every seed).
// None on another system or at another δ.
func (r *PracticalResult) goals() []string {
	var out []string
	if r.systemName() != "LQ-E1" || r.Config.Delta != 1e-5 {
		return nil // the goals are stated on LQ-E1 at δ = 1e-5
	}
	for _, c := range r.Curves {
		if c.Agent != agents.PracticalName || c.Epsilon != 1 {
			continue
		}
		K := c.Episodes
		worstFirst, worstFinal := 0, 0.0
		for _, s := range c.Runs {
			f := s.FirstOffZero
			if f == 0 {
				f = math.MaxInt
			}
			worstFirst = max(worstFirst, f)
			worstFinal = math.Max(worstFinal, s.Final)
		}
		first := "never"
		if worstFirst != math.MaxInt {
			first = fmt.Sprint(worstFirst)
		}
		out = append(out, fmt.Sprintf("leaves the zero-control line before k = 2·10⁴ (every seed): %s (latest first episode off the line: %s)",
			holds(worstFirst < 20000), first))
		z := r.Zero[K-1]
		if K != 100000 {
			out = append(out, fmt.Sprintf("R(10⁵) < Z(10⁵): NOT MEASURED (K = %d); at K: mean R = %.1f, max over seeds %.1f, Z = %.1f", K, c.band.Mean[K-1], worstFinal, z))
			continue
		}
		out = append(out, fmt.Sprintf("R(10⁵) < Z(10⁵) = %.1f: %s (mean R = %.1f, max over %d seeds %.1f)", z, holds(worstFinal < z), c.band.Mean[K-1], len(c.Runs), worstFinal))
	}
	return out
}

// systemName is the system's name for the summary and figure ("LQ-E1" when unset).
func (r *PracticalResult) systemName() string {
	if r.System == "" {
		return "LQ-E1"
	}
	return r.System
}

func holds(b bool) string {
	if b {
		return "HOLDS"
	}
	return "MISSED"
}

// Summary renders the summary (markdown).
func (r *PracticalResult) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# practical-lq: dprl's practical Private-OFU-RL on %s\n\n", r.systemName())
	fmt.Fprintf(&b, "practical-ofu-rl is %s: joint Gram/cross-term release through a Gaussian factorisation counter (%s),\n", agents.PracticalLabel, r.Config.Counter)
	fmt.Fprintf(&b, "per-episode budget B = %g (Δ₂ = B, replace-one), releases after users 1, 2, 4, …, then every %d users, exact μ-GDP,\n", r.Config.Budget, r.Config.BatchEvery)
	fmt.Fprintf(&b, "confidence set from the noise actually added (α = %g per release). Seeds: %v. Zero line Z(k): u ≡ 0.\n\n", r.Config.Confidence, r.Seeds)
	fmt.Fprintf(&b, "## Goals (issue 13, LQ-E1, (1, 1e-5)-JDP)\n\n")
	for _, g := range r.Goals {
		fmt.Fprintf(&b, "- %s\n", g)
	}
	fmt.Fprintf(&b, "\n## R(k), mean over seeds (± 95%% half-width when n > 1)\n\n| curve | guarantee |")
	for _, k := range r.Config.ReportAt {
		fmt.Fprintf(&b, " R(%d) |", k)
	}
	fmt.Fprintf(&b, " growth exp. (last decade) | first k off zero line (per seed) |\n|---|---|")
	for range r.Config.ReportAt {
		b.WriteString("---|")
	}
	b.WriteString("---|---|\n")
	row := func(label, guar string, band report.Band, K int, growth string, first string) {
		fmt.Fprintf(&b, "| %s | %s |", label, guar)
		for _, k := range r.Config.ReportAt {
			if k > K {
				b.WriteString(" – |")
				continue
			}
			if band.N > 1 {
				fmt.Fprintf(&b, " %.1f ± %.1f |", band.Mean[k-1], (band.Hi[k-1]-band.Lo[k-1])/2)
			} else {
				fmt.Fprintf(&b, " %.1f |", band.Mean[k-1])
			}
		}
		fmt.Fprintf(&b, " %s | %s |\n", growth, first)
	}
	for _, c := range r.Curves {
		var fs []string
		for _, s := range c.Runs {
			fs = append(fs, fmt.Sprint(s.FirstOffZero))
		}
		g := "undefined"
		if c.Growth.Defined() {
			g = fmt.Sprintf("%.3f", float64(c.Growth))
		}
		if a, ok := lookupAgent(c.Agent); ok {
			g += fmt.Sprintf(" (theory %s)", a.Theory)
		}
		row(c.Label, c.Guarantee, c.band, c.Episodes, g, strings.Join(fs, ", "))
	}
	row("zero policy Z(k)", "–", report.Band{Mean: r.Zero, N: 1}, len(r.Zero), "1", "–")
	fmt.Fprintf(&b, "\nWall time %.1f s with %d workers. The paper's Private-OFU-RL plays u ≡ 0 (R = Z exactly) while\n", r.Seconds, r.Workers)
	b.WriteString("its union-bound regulariser dominates (lq spec §5.4); OFU-RL (ε = ∞) runs the optimistic step every\n")
	b.WriteString("episode (≈ 5 ms), hence its shorter horizon. practical-ofu-rl plans once per release for 4 public\n")
	b.WriteString("reference initial states. Growth exponents near 1 mean linear regret over the last decade of k.\n")
	return b.String()
}

// Write writes the run directory in the one layout (engine.WriteRun): curves/<system>/*.csv
// (cumulative regret per seed, mean, 95 % band), the zero line beside them,
// regret-<system>.{png,svg}, summary.md and manifest.json last (all atomic). dir must
// not hold an earlier run unless force. The regret figure has a logarithmic y axis.
func (r *PracticalResult) Write(dir string, force bool, command []string) (string, error) {
	return r.WriteWith(dir, rundir.Options{Force: force, LogY: "log"}, command)
}

// WriteWith is Write with the output options: Force, and LogY for the regret figure ("" or
// "log": logarithmic, as Write; "linear"; "auto": logarithmic when the curves' final values
// differ by more than rundir.AutoLogRatio).
func (r *PracticalResult) WriteWith(dir string, out rundir.Options, command []string) (string, error) {
	if err := out.Validate(); err != nil {
		return "", err
	}
	if out.LogY == "" {
		out.LogY = "log"
	}
	if err := rundir.Prepare(dir, out.Force); err != nil {
		return "", err
	}
	return r.write(dir, out, nil, command)
}

// write writes the run directory (prepared) with the output options out: the regret figure's
// y axis out.LogY ("" or "log": logarithmic; "linear"; "auto"), and the manifest last through
// rundir.WriteManifest (out.BeforeManifest, set by the engine, writes meta.json,
// config.resolved.yaml and regret_long.csv just before it). inputs are the input files
// recorded in the manifest; nil records the embedded configuration.
func (r *PracticalResult) write(dir string, out rundir.Options, inputs []rundir.Input, command []string) (string, error) {
	if out.LogY == "" {
		out.LogY = "log"
	}
	sys := sanitize(r.systemName())
	if inputs == nil {
		inputs = []rundir.Input{rundir.HashBytes("config", "embedded:experiment/lq/configs/practical-lq.yaml", practicalEmbedded)}
	}
	name := r.Config.Name
	if name == "" {
		name = practicalDefaultName
	}
	o := &engine.RunOutput{Family: "lq", Experiment: name, Provenance: rundir.NewProvenance(inputs), Command: command, Config: r.Config,
		Workers: r.Workers, WallSeconds: r.Seconds, Output: out}
	var finals []float64
	for _, c := range r.Curves {
		eps := make([]int, c.Episodes)
		for k := range eps {
			eps[k] = k + 1
		}
		runs := make([][]float64, len(c.Runs))
		names := make([]string, len(c.Runs))
		seeds := make([]uint64, len(c.Runs))
		speed := 0.0
		for j, s := range c.Runs {
			runs[j], names[j], seeds[j] = s.cum, fmt.Sprintf("seed%d", s.Seed), s.Seed
			speed += float64(c.Episodes) / s.Seconds
		}
		st := report.StyleNonPrivate
		if c.private {
			st = report.StylePrivate
		}
		co := engine.CurveOutput{Dir: sys, File: sanitize(c.Label), Steps: eps, Runs: runs, Names: names, Band: c.band, Style: st}
		co.Label, co.Agent, co.Env, co.Episodes, co.Seeds, co.Privacy = c.Label, c.Agent, r.systemName(), c.Episodes, seeds, c.Privacy
		co.Epsilon, co.Delta = engine.NominalPrivacy(c.private, c.Epsilon, r.Config.Delta)
		if K := c.Episodes; K <= len(r.Zero) {
			co.Reference = engine.Reference{Kind: engine.RefZero, RegretPerEpisode: rundir.Number(r.Zero[K-1] / float64(K))}
		}
		co.EpisodesPerSecond = rundir.Number(speed / float64(len(c.Runs)))
		co.Extras = map[string]any{"lq": map[string]any{"guarantee": c.Guarantee, "epsilon": c.EpsText, "runs": c.Runs,
			"growth_exponent_last_decade": c.Growth, "growth_exponent_theory": c.GrowthTheory, "undefined": c.Undefined}}
		o.Curves = append(o.Curves, co)
		if n := len(c.band.Mean); n > 0 {
			finals = append(finals, c.band.Mean[n-1])
		}
	}
	zero, err := writeZeroLine(dir, sys, r.systemName(), r.Zero, len(r.Seeds), o)
	if err != nil {
		return "", err
	}
	o.PlotOptions = func(string, []float64) report.PlotOptions {
		return report.PlotOptions{LogX: true, LogY: out.UseLogY(finals), Width: 11 * vg.Inch, Height: 7 * vg.Inch}
	}
	summary := r.Summary()
	o.Summary = summary
	o.Extras = map[string]any{"lq": map[string]any{"long": r.Long, "goals": r.Goals, "system": r.systemName(), "zero_line_csv": zero}}
	if _, err := engine.WriteRun(dir, o); err != nil {
		return "", err
	}
	return summary, nil
}
