package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"

	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/atomicfile"
	"github.com/dprl/dprl/internal/strictdecode"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/report"
)

// ReportInputSchema names the input of `dprl report` (ReportInput).
const ReportInputSchema = "dprl.report-input/v1"

// Bounds of a report input, checked before anything is allocated for it.
const (
	MaxReportCurves = 1000
	MaxReportSeeds  = 1000
	MaxReportSteps  = 100_000
)

// ReportInput is what a program outside the engine (the Python package's runner) hands to
// `dprl report` so that its run directory is written by the one writer (WriteRun) in the one
// schema: the curves' per-seed cumulative regret at recorded episodes and each curve's record.
type ReportInput struct {
	Schema      string          `json:"schema"`
	Family      string          `json:"family"`
	Experiment  string          `json:"experiment"`
	Command     []string        `json:"command,omitempty"`
	Config      json.RawMessage `json:"config,omitempty"`
	WallSeconds float64         `json:"wall_seconds,omitempty"`
	Workers     int             `json:"workers,omitempty"`
	// Inputs are input files to record (role, path, SHA-256).
	Inputs []rundir.Input `json:"inputs,omitempty"`
	// Summary is the producer's text of summary.md (Markdown); Files the other files it wrote
	// into the directory itself (relative paths, listed in the manifest).
	Summary string         `json:"summary,omitempty"`
	Files   []string       `json:"files,omitempty"`
	Extras  map[string]any `json:"extras,omitempty"`
	Curves  []ReportCurve  `json:"curves"`
}

// ReportCurve is one curve of a ReportInput.
type ReportCurve struct {
	Label string `json:"label"`
	Agent string `json:"agent"`
	Env   string `json:"env"`
	// Epsilon and Delta are the nominal (ε, δ) (null: non-private, or pure ε-DP for δ).
	Epsilon *float64 `json:"epsilon"`
	Delta   *float64 `json:"delta"`
	// Steps are the recorded episodes (1-based, increasing; the last is K) and Runs[i] the
	// cumulative regret of Seeds[i] at Steps.
	Steps []int       `json:"steps"`
	Seeds []uint64    `json:"seeds"`
	Runs  [][]float64 `json:"runs"`
	// Reference is the no-learning reference; EpisodesPerSecond null when not timed.
	Reference         Reference      `json:"reference"`
	EpisodesPerSecond *float64       `json:"episodes_per_second"`
	Privacy           ledger.Report  `json:"privacy"`
	Extras            map[string]any `json:"extras,omitempty"`
	// Spec, if set, is the curve's resolved specification recorded in config.resolved.yaml
	// (as the family that runs the agent records it, so that dprl compare recognises the same
	// environment); default: its label, agent, environment, ε, δ and K.
	Spec json.RawMessage `json:"spec,omitempty"`
}

// ParseReportInput decodes a report input strictly (unknown fields and a second document are
// errors naming the field) and validates it; errors name the field.
func ParseReportInput(data []byte) (*ReportInput, error) {
	var in ReportInput
	if err := strictdecode.Decode(data, "json", &in); err != nil {
		return nil, fmt.Errorf("report input: %w", err)
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return &in, nil
}

// Validate checks the input; errors name the field.
func (in *ReportInput) Validate() error {
	if in.Schema != ReportInputSchema {
		return fmt.Errorf("schema: must be %q, got %q", ReportInputSchema, in.Schema)
	}
	if err := rundir.CheckName("family", in.Family); err != nil {
		return err
	}
	if err := rundir.CheckName("experiment", in.Experiment); err != nil {
		return err
	}
	if !(in.WallSeconds >= 0) || math.IsInf(in.WallSeconds, 0) {
		return fmt.Errorf("wall_seconds: must be finite and >= 0, got %v", in.WallSeconds)
	}
	if in.Workers < 0 {
		return fmt.Errorf("workers: must be >= 0, got %d", in.Workers)
	}
	for i, f := range in.Files {
		if !filepath.IsLocal(filepath.FromSlash(f)) {
			return fmt.Errorf("files[%d]: %q is not a path inside the run directory", i, f)
		}
	}
	if n := len(in.Curves); n == 0 || n > MaxReportCurves {
		return fmt.Errorf("curves: need 1 to %d curves, got %d", MaxReportCurves, n)
	}
	seen := map[string]bool{}
	for i, c := range in.Curves {
		bad := func(field, format string, args ...any) error {
			return fmt.Errorf("curves[%d].%s: %s", i, field, fmt.Sprintf(format, args...))
		}
		switch {
		case c.Label == "":
			return bad("label", "must not be empty")
		case c.Agent == "":
			return bad("agent", "must not be empty")
		case c.Env == "":
			return bad("env", "must not be empty")
		}
		key := c.Env + "\x00" + rundir.FileName(c.Label)
		if seen[key] {
			return bad("label", "%q: two curves of environment %q write the same file", c.Label, c.Env)
		}
		seen[key] = true
		if c.Epsilon != nil && (!(*c.Epsilon > 0) || math.IsInf(*c.Epsilon, 0)) {
			return bad("epsilon", "must be finite and > 0 or null, got %v", *c.Epsilon)
		}
		if c.Delta != nil && !(*c.Delta >= 0 && *c.Delta < 1) {
			return bad("delta", "must be in [0, 1) or null, got %v", *c.Delta)
		}
		if n := len(c.Steps); n == 0 || n > MaxReportSteps {
			return bad("steps", "need 1 to %d recorded episodes, got %d", MaxReportSteps, n)
		}
		for j, s := range c.Steps {
			if s < 1 || (j > 0 && s <= c.Steps[j-1]) {
				return bad(fmt.Sprintf("steps[%d]", j), "must be increasing and >= 1, got %d", s)
			}
		}
		if n := len(c.Seeds); n == 0 || n > MaxReportSeeds {
			return bad("seeds", "need 1 to %d seeds, got %d", MaxReportSeeds, n)
		}
		if len(c.Runs) != len(c.Seeds) {
			return bad("runs", "%d runs for %d seeds", len(c.Runs), len(c.Seeds))
		}
		ss := slices.Clone(c.Seeds)
		slices.Sort(ss)
		if len(slices.Compact(ss)) != len(c.Seeds) {
			return bad("seeds", "must be distinct")
		}
		for j, r := range c.Runs {
			if len(r) != len(c.Steps) {
				return bad(fmt.Sprintf("runs[%d]", j), "%d values for %d steps", len(r), len(c.Steps))
			}
			for k, v := range r {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return bad(fmt.Sprintf("runs[%d][%d]", j, k), "must be finite, got %v", v)
				}
			}
		}
		switch c.Reference.Kind {
		case RefUniform, RefZero, RefNone, "":
		default:
			return bad("reference.kind", "must be %s, %s or %s, got %q", RefUniform, RefZero, RefNone, c.Reference.Kind)
		}
		if c.EpisodesPerSecond != nil && (!(*c.EpisodesPerSecond >= 0) || math.IsInf(*c.EpisodesPerSecond, 0)) {
			return bad("episodes_per_second", "must be finite and >= 0 or null, got %v", *c.EpisodesPerSecond)
		}
		switch c.Privacy.Model {
		case ledger.JDP, ledger.LDP, ledger.None, ledger.NoiseOff:
		default:
			return bad("privacy.model", "must be %s, %s, %s or %s, got %q", ledger.JDP, ledger.LDP, ledger.None, ledger.NoiseOff, c.Privacy.Model)
		}
	}
	return nil
}

// num returns *p as a Number, NaN (null) for nil.
func num(p *float64) rundir.Number {
	if p == nil {
		return rundir.Number(math.NaN())
	}
	return rundir.Number(*p)
}

// WriteReport writes the run directory dir of a report input with the one writer: every
// curve's CSV, figures, summary.md, then config.resolved.yaml (the curves as cells),
// regret_long.csv and meta.json, and manifest.json last. dir must not hold an earlier run
// unless o.Force (rundir.Prepare). o.LogY sets the figures' y axis.
func WriteReport(dir string, in *ReportInput, o rundir.Options) (*RunManifest, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if err := o.Prepare(dir); err != nil {
		return nil, err
	}
	var config any = map[string]any{}
	if len(in.Config) > 0 {
		config = in.Config
	}
	out := &RunOutput{Family: in.Family, Experiment: in.Experiment, Provenance: rundir.NewProvenance(in.Inputs), Command: in.Command,
		Config: config, Workers: in.Workers, WallSeconds: in.WallSeconds, Summary: in.Summary, Files: in.Files, Extras: in.Extras}
	type cell struct {
		Cell  string   `json:"cell"`
		Spec  any      `json:"spec"`
		Seeds []uint64 `json:"seeds"`
	}
	var cells []cell
	seedSet := map[uint64]bool{}
	for _, c := range in.Curves {
		// Columns in ascending seed order, as every family writes them.
		idx := make([]int, len(c.Seeds))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return c.Seeds[idx[a]] < c.Seeds[idx[b]] })
		seeds := make([]uint64, len(idx))
		runs := make([][]float64, len(idx))
		for i, j := range idx {
			seeds[i], runs[i] = c.Seeds[j], c.Runs[j]
			seedSet[seeds[i]] = true
		}
		band, err := report.MeanBand(runs, 0.95)
		if err != nil {
			return nil, fmt.Errorf("curve %q: %w", c.Label, err)
		}
		names, _ := report.SeedColumns(len(seeds), func(i int) (uint64, []float64) { return seeds[i], runs[i] })
		co := CurveOutput{Steps: c.Steps, Runs: runs, Names: names, Band: band, Style: report.StyleNonPrivate}
		switch {
		case c.Privacy.Private() && c.Privacy.PrivateAtNominal:
			co.Style = report.StylePrivate
		case c.Privacy.Private():
			co.Style = report.StyleNotPrivateAtNominal
		}
		co.Label, co.Agent, co.Env, co.Episodes, co.Seeds = c.Label, c.Agent, c.Env, c.Steps[len(c.Steps)-1], seeds
		co.Epsilon, co.Delta, co.EpisodesPerSecond, co.Privacy, co.Reference, co.Extras = num(c.Epsilon), num(c.Delta), num(c.EpisodesPerSecond), c.Privacy, c.Reference, c.Extras
		if co.Reference.Kind == "" || co.Reference.Kind == RefNone {
			co.Reference = Reference{Kind: RefNone, RegretPerEpisode: rundir.Number(math.NaN())}
		}
		out.Curves = append(out.Curves, co)
		var spec any = map[string]any{"label": c.Label, "agent": c.Agent, "env": c.Env, "epsilon": co.Epsilon, "delta": co.Delta, "episodes": co.Episodes}
		if len(c.Spec) > 0 {
			spec = c.Spec
		}
		cells = append(cells, cell{Cell: c.Env + "/" + c.Label, Spec: spec, Seeds: seeds})
	}
	o.BeforeManifest = func(d string) error {
		doc, err := json.Marshal(map[string]any{"family": in.Family, "experiment": in.Experiment, "cells": cells})
		if err != nil {
			return err
		}
		cfg, err := resolvedYAML(doc)
		if err != nil {
			return err
		}
		if err := atomicfile.WriteBytes(filepath.Join(d, ResolvedConfigFile), cfg, 0o644); err != nil {
			return err
		}
		long, err := longRegret(d, in.Family)
		if err != nil {
			return err
		}
		if err := atomicfile.WriteBytes(filepath.Join(d, LongRegretFile), long, 0o644); err != nil {
			return err
		}
		var seeds []uint64
		for s := range seedSet {
			seeds = append(seeds, s)
		}
		slices.Sort(seeds)
		units := 0
		for _, c := range cells {
			units += len(c.Seeds)
		}
		return rundir.WriteJSON(filepath.Join(d, MetaFile), Meta{Provenance: out.Provenance, Family: in.Family, Experiment: in.Experiment,
			Seeds: seeds, Units: units, ConfigSHA256: rundir.HashBytes("", "", cfg).SHA256, RegretLongSHA256: rundir.HashBytes("", "", long).SHA256,
			Workers: in.Workers, WallSeconds: in.WallSeconds})
	}
	out.Output = o
	return WriteRun(dir, out)
}
