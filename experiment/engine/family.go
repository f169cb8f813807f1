package engine

import (
	"context"
	"fmt"

	"github.com/dprl/dprl/experiment/rundir"
)

// LocalOptions control a family's Run on this machine (execution, not results): every
// family's Options.
type LocalOptions struct {
	// Workers is the number of parallel units (0 = GOMAXPROCS where the family allows it).
	// Results do not depend on it.
	Workers int
	// Progress, if non-nil, is called with the number of episodes done and the total.
	Progress func(done, total int64)
	// Output is handed to the result's Write: Force (replace an earlier run in the output
	// directory), Inputs (extra input files to record), LogY.
	Output rundir.Options
}

// Local returns the executor of o: Workers workers reporting to Progress.
func (o LocalOptions) Local() Local { return Local{Workers: o.Workers, Progress: o.Progress} }

// Outputter is a family's result that its Write writes with output options (Result.Output).
type Outputter interface {
	SetOutput(rundir.Options)
}

// RunLocal is a family's Run: it checks o.Output, plans (plan), runs every unit on this
// machine without writing files (RunResult) and returns what result assembles from the
// collection (o.Output.Inputs are the extra inputs to record), its output options set to
// o.Output.
func RunLocal[P Plan, R Outputter](ctx context.Context, o LocalOptions, plan func() (*Planned, error), result func(P, *Collection, []rundir.Input) (R, error)) (R, error) {
	var zero R
	if err := o.Output.Validate(); err != nil {
		return zero, err
	}
	pl, err := plan()
	if err != nil {
		return zero, err
	}
	res, err := RunResult(ctx, pl, o.Local(), func(p P, c *Collection) (R, error) {
		return result(p, c, o.Output.Inputs)
	})
	if err != nil {
		return zero, err
	}
	res.SetOutput(o.Output)
	return res, nil
}

// Collect is a plan's Collect: it assembles the result of the collected units (result, with
// c.Inputs as the extra inputs), sets its output options to c.Options and writes it into c.Dir
// (write, whose error names the directory), returning what write returns (the text to print).
func Collect[R Outputter](c *Collection, result func(*Collection, []rundir.Input) (R, error), write func(R) (string, error)) (string, error) {
	res, err := result(c, c.Inputs)
	if err != nil {
		return "", err
	}
	res.SetOutput(c.Options)
	text, err := write(res)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", c.Dir, err)
	}
	return text, nil
}
