package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/dprl/dprl/experiment"
	"github.com/dprl/dprl/experiment/engine"
	explin "github.com/dprl/dprl/experiment/linmdp"
	lmexp "github.com/dprl/dprl/experiment/linmix"
	explq "github.com/dprl/dprl/experiment/lq"
	"github.com/dprl/dprl/experiment/rundir"
)

// newRegistry returns the engine's registry of agent families: `dprl run`, `dprl sweep`,
// `dprl list` and every `dprl reproduce NAME` (one per embedded reproduction) come from it.
func newRegistry() *engine.Registry {
	r := &engine.Registry{}
	r.Register(experiment.Family{})
	r.Register(explq.Family{})
	r.Register(lmexp.Family{})
	r.Register(explin.Family{})
	r.Renamed("practical-lq", "lq", "dprl's practical agents run on every LQ system, including system files (dprl run --family lq --agent practical-ofu-rl …; in a configuration: family: lq, suite: practical)")
	r.Renamed("practical-tabular", "tabular", "dprl's practical agents run on every tabular environment, including MDP files (dprl run --family tabular --agent practical-jdp …; in a configuration: family: tabular, suite: practical)")
	return r
}

// executePlan runs a plan on this machine (resuming an interrupted run in out) with a progress
// report, collects it into out and returns the text to print. --log-y and --out are checked
// before any compute; engine.Execute prepares out before launching a unit: a completed earlier
// run there is bad input naming --force (exit status 2), an interrupted one (unit files, no
// manifest) resumes.
func executePlan(p *engine.Planned, workers int, out string, o outputFlags, inputs []rundir.Input, stderr io.Writer, quiet bool) (string, error) {
	if err := checkWorkers(workers); err != nil {
		return "", err
	}
	if err := o.check(); err != nil {
		return "", err
	}
	if err := checkOut(out); err != nil {
		return "", err
	}
	release, err := rundir.Lock(out) // one run at a time in out, for the whole run
	if err != nil {
		return "", err
	}
	defer release()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	l := engine.Local{Workers: workers}
	var finish func()
	l.Progress, finish = progress(stderr, p.Name(), "episodes", quiet)
	text, err := engine.Execute(ctx, p, l, engine.RunOptions{Dir: out, Force: o.force, Command: os.Args, Inputs: inputs, Output: o.options()})
	finish()
	if errors.Is(err, rundir.ErrEarlierRun) {
		return "", usageError{fmt.Errorf("--out: %w", err)}
	}
	return text, err
}

// preflight runs executePlan's cheap checks before a plan is made (planning may build every
// agent once, which takes seconds for some families): --workers, --log-y and, when it is
// known before planning (outSet), the output directory.
func preflight(workers int, out string, outSet bool, o outputFlags) error {
	if err := checkWorkers(workers); err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	if !outSet {
		return nil
	}
	if err := checkOut(out); err != nil {
		return err
	}
	if err := engine.CheckOut(out, o.force); err != nil {
		return usageError{fmt.Errorf("--out: %w", err)}
	}
	return nil
}

// runFamily is `dprl run --config FILE` for a family other than tabular.
func runFamily(r *engine.Registry, fam string, block []byte, source string, inputs []rundir.Input, workers int, out string, outSet bool, o outputFlags, stdout, stderr io.Writer, quiet bool) error {
	if err := preflight(workers, out, outSet, o); err != nil {
		return err
	}
	p, err := r.PlanBlock(fam, block, source)
	if err != nil {
		return usageError{err}
	}
	if !outSet {
		out = "runs/" + p.Name()
	}
	return runPlanned(p, inputs, workers, out, o, stdout, stderr, quiet)
}
