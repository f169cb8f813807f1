package linmdp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

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

// Catalogue implements engine.Family.
func (Family) Catalogue(w io.Writer) {
	fmt.Fprintln(w, "Environments: envs[].kind (see the linear-mdp configuration), or kind: file with path")
	fmt.Fprintln(w, "Agents:  "+strings.Join(AgentNames(), ", "))
}

// Plan implements engine.Family: block is a Suite or a single Config (strict decode,
// validated).
func (Family) Plan(block []byte, source string) (engine.Plan, error) {
	s, err := ParseSuite(block)
	if err != nil {
		return nil, err
	}
	return newSuitePlan(s, nil)
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
	s, err := ParseSuite(block)
	if err != nil {
		return nil, err
	}
	for _, b := range s.Blocks {
		if episodes != 0 {
			b.Episodes = episodes
		}
		if seeds != nil {
			b.Seeds = seeds
		}
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return yaml.Marshal(s)
}

// PlanSuite plans an already parsed and validated suite (flags applied).
func PlanSuite(s *Suite) (*engine.Planned, error) {
	p, err := newSuitePlan(s, nil)
	if err != nil {
		return nil, err
	}
	return engine.NewPlanned(FamilyName, p)
}

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
		sha := map[string]string{}
		for _, e := range cfg.Envs {
			if e.Kind == "file" {
				in, err := rundir.HashFile("env", e.Path)
				if err != nil {
					return nil, err
				}
				sha[e.Name] = in.SHA256
			}
		}
		envSpec := map[string]EnvSpec{}
		for _, e := range cfg.Envs {
			envSpec[e.Name] = e
		}
		for ci, cr := range tmpl.Cells {
			c := cr.Cell
			spec, err := json.Marshal(unitSpec{Env: envSpec[c.Env], EnvSHA: sha[c.Env], Episodes: cfg.Episodes, Delta: cfg.Delta, P: cfg.P,
				Checkpoints: tmpl.Checkpoints, TieBreak: cfg.TieBreak, Cell: c})
			if err != nil {
				return nil, fmt.Errorf("%s/%s/%s: %w", c.Env, c.Beta, c.Label, err)
			}
			name := fmt.Sprintf("%s/%s/%s/%s", cfg.Name, c.Env, c.Beta, c.Label)
			for si, seed := range cfg.Seeds {
				p.units = append(p.units, engine.Unit{Cell: name, Spec: spec, Seed: seed, Cost: int64(cfg.Episodes)})
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
// (as before the engine).
func (p *suitePlan) Run(ctx context.Context, i int, st engine.Streams, rec *engine.Recorder) error {
	r := p.refs[i]
	b := &p.blocks[r.block]
	cell := b.tmpl.Cells[r.cell].Cell
	sr, err := runOne(ctx, b.envs[cell.Env], b.cfg, cell, st.Seed, b.tmpl.Checkpoints)
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
	return engine.RunInMemory(ctx, pl, engine.Local{Workers: opts.Workers, Progress: opts.Progress})
}

// results assembles every block's Result from the units' results (every unit is required).
func (p *suitePlan) results(c *engine.Collection, extra []rundir.Input) ([]*Result, error) {
	var out []*Result
	i := 0
	for _, b := range p.blocks {
		res := *b.tmpl
		res.Workers, res.Seconds = c.Workers, c.Seconds
		res.Inputs = rundir.MergeInputs(rundir.MergeInputs(rundir.MergeInputs(nil, b.cfg.Inputs), extra), b.tmpl.Inputs)
		res.Cells = make([]CellResult, len(b.tmpl.Cells))
		for ci, cr := range b.tmpl.Cells {
			res.Cells[ci] = CellResult{Cell: cr.Cell, Runs: make([]SeedResult, len(b.cfg.Seeds))}
			for si := range b.cfg.Seeds {
				if err := c.Load(i, &res.Cells[ci].Runs[si]); err != nil {
					return nil, err
				}
				i++
			}
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
	return fmt.Sprintf("%s\nWrote %s (manifest.json, summary.md, %s, */curves/*.csv)", summary, filepath.Clean(c.Dir), strings.Join(man.Figures, ", ")), nil
}
