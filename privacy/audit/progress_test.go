package audit

import (
	"context"
	"testing"

	"github.com/dprl/dprl/rng"
)

// progressLog records the calls of an Options.Progress callback and checks them: done goes
// up by exactly one per call, total never changes, and the last call has done == total.
type progressLog struct {
	calls       int
	last, total int
	bad         string
}

func (l *progressLog) record(done, total int) {
	switch {
	case l.calls == 0 && total <= 0:
		l.bad = "non-positive total"
	case l.calls > 0 && total != l.total:
		l.bad = "total changed"
	case done != l.last+1:
		l.bad = "done did not go up by one"
	}
	l.calls++
	l.last, l.total = done, total
}

// TestProgressCounts checks the run-level progress callback of Audit (one target) and RunAll
// (across targets): monotone by one, constant total, ending at the total number of runs, for
// any worker count; and setting it does not change the results.
func TestProgressCounts(t *testing.T) {
	ts := MechanismTargets()[:2]
	cases := []struct {
		name    string
		all     bool
		workers int
		runs    int
		want    int
	}{
		{"audit/1 worker", false, 1, 300, 600},
		{"audit/3 workers", false, 3, 300, 600},
		{"runall/2 workers", true, 2, 250, 2 * 2 * 250},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var l progressLog
			opts := Options{Runs: c.runs, Workers: c.workers, Seed: rng.NewSeed(11), Progress: l.record}
			plain := opts
			plain.Progress = nil
			var got, ref []Result
			if c.all {
				rep, err := RunAll(context.Background(), ts, opts, CanaryOptions{}, nil)
				if err != nil {
					t.Fatal(err)
				}
				rep0, err := RunAll(context.Background(), ts, plain, CanaryOptions{}, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, ref = rep.Results, rep0.Results
			} else {
				r, err := Audit(context.Background(), ts[0], opts)
				if err != nil {
					t.Fatal(err)
				}
				r0, err := Audit(context.Background(), ts[0], plain)
				if err != nil {
					t.Fatal(err)
				}
				got, ref = []Result{r}, []Result{r0}
			}
			if l.bad != "" {
				t.Errorf("progress calls: %s (after %d calls, last %d/%d)", l.bad, l.calls, l.last, l.total)
			}
			if l.calls != c.want || l.last != c.want || l.total != c.want {
				t.Errorf("progress: %d calls, last %d/%d, want %d calls ending at %d/%d", l.calls, l.last, l.total, c.want, c.want, c.want)
			}
			for i := range got {
				got[i].Seconds, ref[i].Seconds = 0, 0
				if got[i] != ref[i] {
					t.Errorf("result %d changed with a progress callback:\n%+v\n%+v", i, got[i], ref[i])
				}
			}
		})
	}
}
