package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dprl/dprl/internal/atomicfile"
)

// Report is the outcome of auditing a set of targets.
type Report struct {
	// Seed identifies the audit's root seed (RunAll records its digest; the CLI records its
	// --seed value). Runs is the runs-per-side override (0 = each target's own).
	Seed    uint64         `json:"seed"`
	Runs    int            `json:"runs_per_side_override,omitempty"`
	Results []Result       `json:"results"`
	Canary  []CanaryResult `json:"canary,omitempty"`
	// OK is true when every correct target passed and every broken variant was flagged.
	OK      bool    `json:"ok"`
	Seconds float64 `json:"seconds"`
}

// RunAll audits every target (event audit, and the canary audit where the target has one)
// and summarises. progress, if non-nil, is called after each target; opts.Progress, if set,
// counts the runs of the event audits across all targets (canary audits are not counted).
func RunAll(ctx context.Context, ts []Target, opts Options, canary CanaryOptions, progress func(done, total int, r Result)) (*Report, error) {
	start := time.Now()
	rep := &Report{Seed: opts.Seed.Uint64(), Runs: opts.Runs, OK: true}
	seen := map[string]bool{}
	offset := 0 // runs of the targets audited so far
	if report := opts.Progress; report != nil {
		// One count across every target: the runs of the earlier targets plus this one's.
		total := 0
		for _, t := range ts {
			total += 2 * opts.runsPerSide(t)
		}
		opts.Progress = func(done, _ int) { report(offset+done, total) }
	}
	for i, t := range ts {
		if seen[t.Name] {
			return nil, fmt.Errorf("audit: duplicate target name %q", t.Name)
		}
		seen[t.Name] = true
		r, err := Audit(ctx, t, opts)
		if err != nil {
			return nil, err
		}
		offset += 2 * r.Runs
		rep.Results = append(rep.Results, r)
		if r.Violation != r.Broken {
			rep.OK = false
		}
		if t.Canary != nil {
			co := canary
			co.Seed = opts.Seed
			c, err := CanaryAudit(t, co)
			if err != nil {
				return nil, err
			}
			rep.Canary = append(rep.Canary, c)
		}
		if progress != nil {
			progress(i+1, len(ts), r)
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// Markdown renders the report as two tables: the event audit of every target and the
// one-run canary audits.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| target | claimed ε | δ | audited ε lower bound | confidence | runs/side | verdict | best event |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---|---|\n")
	for _, x := range r.Results {
		fmt.Fprintf(&b, "| %s | %.4g | %g | %.3f | %g | %d | %s | %s (%.4f vs %.4f) |\n", x.Target, x.Claim.Epsilon, x.Claim.Delta,
			x.EpsilonLB, x.Conf, x.Runs, x.Verdict(), strings.ReplaceAll(x.Event, "|", "/"), x.PD, x.PDp)
	}
	if len(r.Canary) > 0 {
		fmt.Fprintf(&b, "\nOne-run canary audits (Steinke, Nasr & Jagielski 2023): one run per target, m canary users each included with probability 1/2.\n\n")
		fmt.Fprintf(&b, "| target | claimed ε | canaries m | guesses r | correct | ε lower bound | confidence | verdict |\n")
		fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|---|\n")
		for _, c := range r.Canary {
			v := "pass"
			switch {
			case c.Broken && c.Violation:
				v = "flagged (broken variant)"
			case c.Broken:
				v = "not flagged (broken variant; one run has low power)"
			case c.Violation:
				v = "VIOLATION"
			}
			fmt.Fprintf(&b, "| %s | %.4g | %d | %d | %d | %.3f | %g | %s |\n", c.Target, c.Claim.Epsilon, c.Canaries, c.Guesses, c.Correct, c.EpsilonLB, c.Conf, v)
		}
	}
	verdict := "every correct target passed and every broken variant was flagged"
	if !r.OK {
		verdict = "NOT OK: a correct target was refuted or a broken variant was missed"
	}
	fmt.Fprintf(&b, "\nEvent audit: %s (seed %d, %.0f s).\n", verdict, r.Seed, r.Seconds)
	return b.String()
}

// Write writes audit.md and audit.json into dir atomically.
func (r *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, "audit.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	return atomicfile.WriteBytes(filepath.Join(dir, "audit.md"), []byte("# dprl audit\n\n"+r.Markdown()), 0o644)
}
