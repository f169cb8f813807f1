package auditregistry

import (
	"fmt"
	"runtime"

	"github.com/dprl/dprl/internal/membudget"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/rng"
)

// probeBytes measures one run of t: the length (capacity) of its output and the bytes it
// allocated, an upper bound of its peak (0, 0 when the probe fails: the audit reports it).
func probeBytes(t audit.Target, seed uint64) (dim, alloc int64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	o, err := t.Run(0, rng.NewSeed(seed).Child("memory-probe"))
	runtime.ReadMemStats(&ms)
	if err != nil {
		return 0, 0
	}
	return int64(cap(o)), int64(ms.TotalAlloc - before)
}

// Estimate bounds the audit of t with n runs per side on workers workers: every output kept
// on both sides (2n slices of dim values), the classifier's feature matrix (n rows of
// 2·min(dim, 128) features) and the per-statistic vectors over the runs, plus the runs under
// way (each at most what one run allocated, measured by a probe run).
func Estimate(t audit.Target, n, workers int, seed uint64) membudget.Terms {
	dim, alloc := probeBytes(t, seed)
	nn := int64(n)
	outputs := membudget.Mul(2*nn, membudget.Slice(dim, 8)+24)
	features := membudget.Floats(membudget.Mul(nn, 2*min(dim, 128)+1))
	stats := membudget.Mul(membudget.Floats(nn), 8)
	return membudget.Terms{
		{What: fmt.Sprintf("%s: outputs of 2 × %d runs of %d values", t.Name, n, dim), Bytes: outputs, Lower: "--runs"},
		{What: "classifier features and statistics", Bytes: membudget.Add(features, stats), Lower: "--runs"},
		{What: fmt.Sprintf("%d runs under way", workers), Bytes: membudget.Mul(alloc, int64(workers)), Lower: "--workers"},
	}
}

// CheckMemory refuses (a membudget error) an audit whose largest target (targets are audited
// one after the other) would exceed the memory budget, before any run but one probe run of
// each target. runs 0 is each target's default; workers 0 is every core.
func CheckMemory(ts []audit.Target, runs, workers int, seed uint64) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var worst membudget.Terms
	for _, t := range ts {
		n := runs
		if n == 0 {
			n = t.Runs
		}
		if n == 0 {
			n = audit.DefaultRuns
		}
		if e := Estimate(t, n, workers, seed); e.Sum() > worst.Sum() {
			worst = e
		}
	}
	return membudget.Check("this audit", membudget.FromTerms(worst))
}
