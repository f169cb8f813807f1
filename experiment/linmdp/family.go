package linmdp

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	model "github.com/dprl/dprl/model/linmdp"
)

// FamilyName is the linear MDP family's name in configurations (`family: linmdp`).
const FamilyName = "linmdp"

// Family is the linear MDP family (LSVI-UCB, Ngo et al.'s and Luyo et al.'s private
// LSVI-UCB, dprl's practical agents) plugged into the engine (issue 11): its configuration
// block is a Suite (or a single Config), its units are (block, cell, seed) runs.
type Family struct{}

// Name implements engine.Family.
func (Family) Name() string { return FamilyName }

// Catalogue implements engine.Family: the environments (with the parameters PlanSpec takes),
// the agents (each private agent's calibration is fixed by its name) and the calibrations.
func (f Family) Catalogue(w io.Writer) {
	l := engine.Listing{Family: FamilyName, Title: "linear MDPs (Ngo, Vietri & Wu 2022 Alg. 1; Luyo et al. 2021 §4 Alg. 2; dprl's practical agents)"}
	l.Envs = engine.EnvEntries(f.SpecEnvs())
	l.Agents = engine.TableEntries(agentTable, agentName, Agent.listing)
	l.Privacy = []engine.Entry{
		{Name: "exact", Desc: "calibration of ngo and the practical agents: the spec's corrected constants, exact accounting"},
		{Name: "paper", Desc: "calibration of ngo-printed (the printed constants, NOT private at the nominal ε) and of Luyo et al.'s agents"},
		{Name: "zcdp", Desc: "calibration of luyo-zcdp: the spec's zCDP recalibration (§4.6, not in the paper)"},
	}
	l.Notes = []string{"In a configuration block: envs[].kind, agents[], epsilons (every agent that uses ε runs at each), beta_modes; a suite has blocks:."}
	l.Write(w)
}

// repros are the family's reproductions: practical-linear-mdp takes --long.
var repros = engine.Repros{
	"linear-mdp": {Describe: "linear MDPs: LSVI-UCB vs Ngo et al. (low switching) and Luyo et al. (batched) private LSVI-UCB, regret vs K at several ε"},
	"practical-linear-mdp": {Describe: "dprl's practical private LSVI-UCB (practical-lsvi, no regret proof) vs Ngo et al., Luyo et al. and non-private twins on E2, ε grid (--long: 10 seeds + LSVI-UCB)",
		Options: []engine.Option{engine.LongOption("10 seeds and LSVI-UCB (refit every episode) in every block")}},
}

// Describe implements engine.Describer.
func (Family) Describe(repro string) string { return repros.Describe(repro) }

// Options implements engine.Optioner: practical-linear-mdp --long.
func (Family) Options(repro string) []engine.Option { return repros.Options(repro) }

// ApplyOptions implements engine.Optioner: --long makes every block long (Suite.long).
func (Family) ApplyOptions(repro string, block []byte, set map[string]string) ([]byte, error) {
	return engine.ApplyBool(block, set, "long", func(block []byte, long bool) ([]byte, error) {
		if !long {
			return block, nil
		}
		return engine.EditConfig(block, ParseSuite, func(s *Suite) error {
			s.long()
			return nil
		})
	})
}

// Plan implements engine.Family: block is a Suite or a single Config (strict decode,
// validated).
func (Family) Plan(block []byte, source string) (engine.Plan, error) {
	return engine.PlanBlock(block, ParseSuite, planSuite)
}

// Reproductions implements engine.Reproducer: `linear-mdp` is the embedded
// configs/linear-mdp.yaml, `practical-linear-mdp` configs/practical-linear-mdp.yaml (its
// `goals: practical` adds issue 13's goals to the summary).
func (Family) Reproductions() map[string][]byte {
	return map[string][]byte{"linear-mdp": append([]byte(nil), defaultConfig...),
		"practical-linear-mdp": append([]byte(nil), practicalConfig...)}
}

// Resize implements engine.Resizer (K and seeds of every block).
func (Family) Resize(block []byte, episodes int, seeds []uint64) ([]byte, error) {
	return engine.EditConfig(block, ParseSuite, func(s *Suite) error {
		for _, b := range s.Blocks {
			engine.ResizeFields(episodes, seeds, &b.Seeds, &b.Episodes)
		}
		return nil
	})
}

// PlanSuite plans an already parsed and validated suite (flags applied).
func PlanSuite(s *Suite) (*engine.Planned, error) {
	return engine.PlanWith(FamilyName, planSuite, s)
}

// planSuite plans a suite with its own summary extras (newSuitePlan).
func planSuite(s *Suite) (*suitePlan, error) { return newSuitePlan(s, nil) }

// suitePlan is a suite planned into units: block-major, then cell-major, then seed.
type suitePlan struct {
	suite  *Suite
	extra  func([]*Result) string
	blocks []blockPlan
	refs   []unitRef
	units  []engine.Unit
}

// blockPlan is one block: its Result template (cells without runs) and environments.
type blockPlan struct {
	cfg  *Config
	tmpl *Result
	envs map[string]*model.MDP
}

// unitRef locates unit i: block, cell and seed index.
type unitRef struct{ block, cell, seed int }

// unitSpec is the resolved configuration of one cell (its digest, with the seed, is the unit
// ID): the environment (with the digest of its file), the block's K, δ, p, checkpoints and tie
// break, and the cell (agent, ε, resolved c_β).
type unitSpec struct {
	Env         EnvSpec `json:"env"`
	EnvSHA      string  `json:"env_sha256,omitempty"`
	Episodes    int     `json:"episodes"`
	Delta       float64 `json:"delta"`
	P           float64 `json:"p"`
	Checkpoints []int   `json:"checkpoints"`
	TieBreak    string  `json:"tie_break"`
	Cell        Cell    `json:"cell"`
}

func newSuitePlan(s *Suite, extra func([]*Result) string) (*suitePlan, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if extra == nil && s.Goals == "practical" {
		extra = PracticalGoals
	}
	p := &suitePlan{suite: s, extra: extra}
	for bi, cfg := range s.Blocks {
		tmpl, envs, err := prepare(cfg)
		if err != nil {
			if len(s.Blocks) > 1 {
				return nil, fmt.Errorf("block %s: %w", cfg.Name, err)
			}
			return nil, err
		}
		p.blocks = append(p.blocks, blockPlan{cfg: cfg, tmpl: tmpl, envs: envs})
		envSpec := map[string]EnvSpec{}
		for _, e := range cfg.Envs {
			envSpec[e.Name] = e
		}
		for ci, cr := range tmpl.Cells {
			c := cr.Cell
			name := fmt.Sprintf("%s/%s/%s/%s", cfg.Name, c.Env, c.Beta, c.Label)
			units, err := engine.CellUnits(name, unitSpec{Env: envSpec[c.Env], EnvSHA: tmpl.envSHA[c.Env], Episodes: cfg.Episodes, Delta: cfg.Delta, P: cfg.P,
				Checkpoints: tmpl.Checkpoints, TieBreak: cfg.TieBreak, Cell: c}, cfg.Seeds, cfg.Episodes)
			if err != nil {
				return nil, fmt.Errorf("%s/%s/%s: %w", c.Env, c.Beta, c.Label, err)
			}
			p.units = append(p.units, units...)
			for si := range units {
				p.refs = append(p.refs, unitRef{bi, ci, si})
			}
		}
	}
	return p, nil
}

// Name implements engine.Plan: the suite's name.
func (p *suitePlan) Name() string { return p.suite.Name }

// Units implements engine.Plan.
func (p *suitePlan) Units() []engine.Unit { return p.units }

// Run implements engine.Plan: the environment's stream is seed/env and the agent's seed/agent
// (as before the engine; runOne).
func (p *suitePlan) Run(ctx context.Context, i int, st engine.Streams, rec *engine.Recorder) error {
	r := p.refs[i]
	b := &p.blocks[r.block]
	cell := b.tmpl.Cells[r.cell].Cell
	sr, err := runOne(ctx, b.envs[cell.Env], b.cfg, cell, st, b.tmpl.Checkpoints)
	if err != nil {
		return err // the engine names the unit (cell and seed)
	}
	rec.Advance(int64(b.cfg.Episodes))
	return rec.Record(sr)
}

// runInMemory runs every unit on this machine without unit files.
func (p *suitePlan) runInMemory(ctx context.Context, opts Options) (*engine.Collection, error) {
	pl, err := engine.NewPlanned(FamilyName, p)
	if err != nil {
		return nil, err
	}
	return engine.RunInMemory(ctx, pl, opts.Local())
}

// first is the Result of the first block (a single Config's suite).
func (p *suitePlan) first(c *engine.Collection, extra []rundir.Input) (*Result, error) {
	rs, err := p.results(c, extra)
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// results assembles every block's Result from the units' results (every unit is required).
func (p *suitePlan) results(c *engine.Collection, extra []rundir.Input) ([]*Result, error) {
	var out []*Result
	i := 0
	for _, b := range p.blocks {
		res := *b.tmpl
		res.Workers, res.Seconds = c.Workers, c.Seconds
		res.Inputs = rundir.MergeAll(b.cfg.Inputs, extra, b.tmpl.Inputs)
		res.Cells = make([]CellResult, len(b.tmpl.Cells))
		for ci, cr := range b.tmpl.Cells {
			runs, err := engine.LoadRuns[SeedResult](c, i, len(b.cfg.Seeds))
			if err != nil {
				return nil, err
			}
			res.Cells[ci] = CellResult{Cell: cr.Cell, Runs: runs}
			i += len(runs)
		}
		out = append(out, &res)
	}
	return out, nil
}

// Collect implements engine.Plan: every block's directory, the suite's summary and the
// manifest last.
func (p *suitePlan) Collect(c *engine.Collection) (string, error) {
	man, summary, err := p.write(c, c.Dir, c.Command, c.Inputs)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", c.Dir, err)
	}
	return fmt.Sprintf("%s\nWrote %s (manifest.json, summary.md, %s, curves/<env>/*.csv)", summary, filepath.Clean(c.Dir), strings.Join(man.Figures, ", ")), nil
}
