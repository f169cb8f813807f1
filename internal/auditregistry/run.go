package auditregistry

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"

	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/bounds"
	"github.com/dprl/dprl/internal/inputerr"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/rng"
)

// MaxRuns bounds the runs per side of an audit (`dprl audit --runs`; each run keeps its
// outputs on both sides).
const MaxRuns = 1_000_000

// WriteList writes every registered target (`dprl audit --list`): name, claim, whether it is
// a broken variant, and its description.
func WriteList(w io.Writer) {
	for _, t := range All() {
		b := ""
		if t.Broken {
			b = " [broken variant]"
		}
		fmt.Fprintf(w, "%-50s ε=%g δ=%g%s\n    %s\n", t.Name, t.Claim.Epsilon, t.Claim.Delta, b, t.Description)
	}
}

// Select returns the targets of an audit (`dprl audit`): every target (all), the targets of
// one family (family: mechanism, tabular, linmdp, linmix, lq — the families of dprl run — or
// the targets' own family names linear-mdp and linear-mixture), or those named by names (names
// or shell patterns such as 'tabular/*'). Errors are bad input.
func Select(all bool, family string, names []string) ([]audit.Target, error) {
	ts := All()
	var sel []audit.Target
	switch {
	case all && (len(names) > 0 || family != ""):
		return nil, inputerr.New("audit: --all cannot be combined with target names or --family")
	case all:
		return ts, nil
	case family != "":
		// The families of dprl run (linmdp, linmix) name the audit targets' families
		// linear-mdp and linear-mixture (the prefix of their target names).
		want := map[string]string{"linmdp": "linear-mdp", "linmix": "linear-mixture"}[family]
		if want == "" {
			want = family
		}
		for _, t := range ts {
			if t.Family == want {
				sel = append(sel, t)
			}
		}
		if len(sel) == 0 {
			return nil, inputerr.New("audit: --family %q has no targets (see dprl audit --list)", family)
		}
	case len(names) > 0:
		for _, a := range names {
			n := 0
			for _, t := range ts {
				if ok, _ := path.Match(a, t.Name); ok || t.Name == a {
					sel = append(sel, t)
					n++
				}
			}
			if n == 0 {
				return nil, inputerr.New("audit: unknown target %q (see dprl audit --list; shell-style patterns like 'tabular/*' work)", a)
			}
		}
	default:
		return nil, inputerr.New("audit: name targets, a --family, or --all (see dprl audit --list)")
	}
	return sel, nil
}

// TargetLog returns a Run.Done that writes one line per audited target on w: its place, name,
// lower bound, claim, verdict and time.
func TargetLog(w io.Writer) func(done, total int, r audit.Result) {
	return func(done, total int, r audit.Result) {
		fmt.Fprintf(w, "dprl: audit %d/%d %-48s ε_LB = %.3f (claim %g)  %s  %.1fs\n", done, total, r.Target, r.EpsilonLB, r.Claim.Epsilon, r.Verdict(), r.Seconds)
	}
}

// Run is an audit as `dprl audit` runs it: its settings and where it reports.
type Run struct {
	// Runs per side (0: each target's default), Confidence of the lower bounds, Workers, Seed.
	Runs       int
	Confidence float64
	Workers    int
	Seed       uint64
	// Out is the output directory (audit.md, audit.json); Force replaces an earlier audit.
	Out   string
	Force bool
	// Progress, when set, reports the runs done across every target; Done, when set, is
	// called after each target.
	Progress func(done, total int64)
	Done     func(done, total int, r audit.Result)
}

// Check checks the audit of sel before any run: --runs, --confidence, --workers, the memory
// its largest target needs (CheckMemory; one probe run of each target) and --out. Errors are
// bad input naming the flag.
func (o Run) Check(sel []audit.Target) error {
	if o.Runs != 0 && (o.Runs < 200 || o.Runs > MaxRuns) {
		return inputerr.New("audit: --runs must be 0 (each target's default) or in [200, %d], got %d", MaxRuns, o.Runs)
	}
	if !(o.Confidence > 0 && o.Confidence < 1) {
		return inputerr.New("audit: --confidence must be in (0, 1), got %v", o.Confidence)
	}
	if err := bounds.Workers(o.Workers); err != nil {
		return inputerr.Wrap(err)
	}
	if err := CheckMemory(sel, o.Runs, o.Workers, o.Seed); err != nil {
		return inputerr.Wrap(err) // --runs (and --workers) bound by the memory budget
	}
	if err := rundir.CheckWritable(o.Out); err != nil {
		return inputerr.New("--out: %v", err)
	}
	return nil
}

// Audit checks (Check) and audits sel, and writes audit.md and audit.json into Out. The
// outputs are a run's: never over a user's file, over an earlier audit only with Force.
func (o Run) Audit(sel []audit.Target) (*audit.Report, error) {
	if err := o.Check(sel); err != nil {
		return nil, err
	}
	release, err := rundir.Lock(o.Out)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := rundir.PrepareOutputs(o.Out, o.Force, "audit.md", "audit.json"); err != nil {
		return nil, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts := audit.Options{Runs: o.Runs, Confidence: o.Confidence, Workers: o.Workers, Seed: rng.NewSeed(o.Seed)}
	if o.Progress != nil {
		opts.Progress = func(done, total int) { o.Progress(int64(done), int64(total)) }
	}
	done := o.Done
	if done == nil {
		done = func(int, int, audit.Result) {}
	}
	rep, err := audit.RunAll(ctx, sel, opts, audit.CanaryOptions{}, done)
	if err != nil {
		return nil, err
	}
	rep.Seed = o.Seed
	if err := rep.Write(o.Out); err != nil {
		return nil, fmt.Errorf("writing %s: %w", o.Out, err)
	}
	return rep, nil
}
