package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dprl/dprl/internal/membudget"
)

// estimatingPlan is fakePlan with a memory estimate.
type estimatingPlan struct {
	fakePlan
	est MemoryEstimate
}

func (p *estimatingPlan) MemoryEstimate() MemoryEstimate { return p.est }

// TestMemoryCheck: a plan whose estimate exceeds the budget is refused (a *membudget.Error
// naming the parameter and the estimate) by Execute before the run directory is touched, by
// Launch and RunInMemory before any unit runs, and by Merge before it collects; the estimate
// counts min(units, workers) units at once, and a plan within the budget runs.
func TestMemoryCheck(t *testing.T) {
	old := membudget.Current()
	defer membudget.Set(old)
	membudget.Set(membudget.Budget{Bytes: membudget.Overhead + 1<<30, Source: "test"})
	var runs atomic.Int64
	base := plan(t, fakeRegistry(&runs), 2, 3)
	big := &estimatingPlan{fakePlan: *base.Plan.(*fakePlan), est: MemoryEstimate{
		Unit:    membudget.Terms{{What: "agent", Bytes: 400 << 20, Lower: "env states"}},
		Collect: membudget.Terms{{What: "curves", Bytes: 100 << 20, Lower: "episodes"}}}}
	p, err := NewPlanned("fake", big)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	_, err = Execute(context.Background(), p, Local{Workers: 4}, RunOptions{Dir: dir})
	var me *membudget.Error
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "env states") || !strings.Contains(err.Error(), "workers (--workers)") {
		t.Fatalf("Execute with 4 workers × 400 MiB: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the refused run touched its directory: %v", err)
	}
	if err := (Local{Workers: 4}).Launch(context.Background(), p, dir, []int{0, 1, 2}); !membudget.IsError(err) {
		t.Errorf("Launch: %v", err)
	}
	if _, err := RunInMemory(context.Background(), p, Local{Workers: 3}); !membudget.IsError(err) {
		t.Errorf("RunInMemory: %v", err)
	}
	if runs.Load() != 0 {
		t.Errorf("%d units ran", runs.Load())
	}
	// Two workers (800 MiB, 5/4 of it with the collector's headroom) fit in 1 GiB + 48 MiB.
	if _, err := Execute(context.Background(), p, Local{Workers: 2}, RunOptions{Dir: dir}); err != nil {
		t.Fatalf("Execute with 2 workers: %v", err)
	}
	big.est.Collect[0].Bytes = 2 << 30
	if _, err := Merge(p, RunOptions{Dir: dir, Force: true}); !membudget.IsError(err) || !strings.Contains(err.Error(), "episodes") {
		t.Errorf("Merge with a 2 GiB collection: %v", err)
	}
}
