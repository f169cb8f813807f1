package tabular

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/dprl/dprl/internal/privacytest"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/rng"
)

// pythonSamples runs python/tests/ldp_audit_samples.py: n reports of each audit trajectory
// from the Python randomiser (variant ok, noise-div4 or no-clip) with the Go calibration's σ
// and layout.
func pythonSamples(t *testing.T, z *GaussianRandomizer, variant string, n int) [2][][]float64 {
	t.Helper()
	trs := auditTrajectories(practicalAuditReward)
	var trajs [][3]any
	for _, tr := range trs {
		trajs = append(trajs, [3]any{tr.S, tr.A, tr.R})
	}
	e := z.enc
	spec, _ := json.Marshal(map[string]any{
		"params": map[string]any{"states": e.S, "actions": e.A, "horizon": e.H, "pool": e.pool, "visit_cap": e.cap, "reward_weight": e.w},
		"sigma":  z.sigma, "trajectories": trajs, "n": n, "variant": variant})
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	cmd := exec.Command("python3", filepath.Join(root, "python", "tests", "ldp_audit_samples.py"))
	cmd.Stdin = bytes.NewReader(spec)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "python"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python randomiser: %v: %s", err, stderr.String())
	}
	d := len(z.rep.x)
	if len(out) != 2*n*d*8 {
		t.Fatalf("python randomiser: %d bytes, want %d", len(out), 2*n*d*8)
	}
	var s [2][][]float64
	for side := range 2 {
		for i := range n {
			v := make([]float64, d)
			for j := range v {
				v[j] = math.Float64frombits(binary.LittleEndian.Uint64(out[((side*n+i)*d+j)*8:]))
			}
			s[side] = append(s[side], v)
		}
	}
	return s
}

// TestPythonRandomizerAudit: dprl's auditor, run on the Python user-side randomiser
// (python/dprl/ldp.py) exactly as on the Go one (the practical-ldp audit target: RiverSwim H =
// 1, (1, 10⁻³), left bank vs right bank with a hostile reward 10), passes it and flags its two
// mutants (noise/4, clipping skipped). Skipped without python3 and the package's numpy, unless
// DPRL_REQUIRE_PYTHON=1 (.ci/run).
func TestPythonRandomizerAudit(t *testing.T) {
	if err := exec.Command("python3", "-c", "import numpy").Run(); err != nil {
		if os.Getenv("DPRL_REQUIRE_PYTHON") == "1" {
			t.Fatalf("python3 with numpy is required (DPRL_REQUIRE_PYTHON=1): %v", err)
		}
		t.Skip("no python3 with numpy: the Python randomiser is audited in .ci/run")
	}
	z, err := practicalAuditRandomizer("ok", rng.NewSeed(1))
	if err != nil {
		t.Fatal(err)
	}
	const runs = 10000
	var targets []audit.Target
	for _, variant := range []string{"ok", "noise-div4", "no-clip"} {
		s := pythonSamples(t, z, variant, runs)
		var next [2]atomic.Int64
		name := "python/practical-ldp"
		if variant != "ok" {
			name += "/" + variant
		}
		targets = append(targets, audit.Target{Name: name, Family: "tabular", Broken: variant != "ok",
			Claim:       audit.Claim{Epsilon: 1, Delta: practicalAuditDelta},
			Description: "the Python randomiser's report on the practical-ldp audit pair",
			Run: func(side int, _ rng.Seed) ([]float64, error) {
				i := next[side].Add(1) - 1
				if i >= runs {
					return nil, fmt.Errorf("more than %d runs asked of side %d", runs, side)
				}
				return s[side][i], nil
			}})
	}
	privacytest.AuditTargets(t, targets, runs, 11, nil)
}
