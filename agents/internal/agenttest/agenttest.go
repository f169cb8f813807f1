// Package agenttest holds test helpers shared by the agent families' tests (agents/tabular,
// agents/linmdp, agents/linmix, agents/lq). It is imported by _test.go files only.
package agenttest

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/privacytest"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/rng"
)

// MaxPairDistance returns max ‖(x − y)/scales‖₂ over all pairs of the vectors, deduplicated
// first (nil scales: the plain ℓ2 distance): the brute-force replace-one sensitivity of an
// encoding enumerated over every episode.
func MaxPairDistance(vs [][]float64, scales []float64) float64 {
	seen := map[string]bool{}
	var u [][]float64
	for _, v := range vs {
		k := fmt.Sprint(v)
		if !seen[k] {
			seen[k] = true
			u = append(u, v)
		}
	}
	best := 0.0
	for i := range u {
		for j := 0; j < i; j++ {
			s := 0.0
			for k, a := range u[i] {
				d := a - u[j][k]
				if scales != nil {
					d /= scales[k]
				}
				s += d * d
			}
			best = max(best, s)
		}
	}
	return math.Sqrt(best)
}

// CountAbove returns how many of xs exceed thr (the event "above the threshold" of an
// empirical ε lower bound, or the coordinates a threshold keeps).
func CountAbove(xs []float64, thr float64) int {
	n := 0
	for _, x := range xs {
		if x > thr {
			n++
		}
	}
	return n
}

// Canary runs the one-run canary audit (seed 2) on the targets named in names: each must be
// flagged exactly when it is a broken variant.
func Canary(t *testing.T, ts []audit.Target, names ...string) {
	t.Helper()
	for _, tg := range ts {
		keep := false
		for _, n := range names {
			keep = keep || tg.Name == n
		}
		if !keep {
			continue
		}
		r, err := audit.CanaryAudit(tg, audit.CanaryOptions{Seed: rng.NewSeed(2)})
		if err != nil {
			t.Fatal(err)
		}
		if r.Violation != tg.Broken {
			t.Errorf("%s: canary ε_LB = %.3f (%d/%d correct), want violation = %v", tg.Name, r.EpsilonLB, r.Correct, r.Guesses, tg.Broken)
		}
	}
}

// Audit runs the agents' CI-sized audit (privacytest.AuditTargets at 10⁴ runs per side, seed
// 11) on the targets whose names contain part ("" audits them all): correct targets must pass,
// broken variants must be flagged. The caller keeps the longtest.Skip of its long test.
func Audit(t *testing.T, ts []audit.Target, part string) {
	t.Helper()
	var keep func(audit.Target) bool
	if part != "" {
		keep = func(tg audit.Target) bool { return strings.Contains(tg.Name, part) }
	}
	privacytest.AuditTargets(t, ts, 10000, 11, keep)
}

// CheckPinned checks that the report's σ, μ and ε have exactly the pinned bits (the values the
// agents' own accountants reported before the ledger, issue 17 item 3); label names the case.
func CheckPinned(t *testing.T, label string, r ledger.Report, sigma, mu, eps uint64) {
	t.Helper()
	got, want := [3]uint64{math.Float64bits(r.Sigma()), math.Float64bits(r.Mu), math.Float64bits(r.Epsilon)}, [3]uint64{sigma, mu, eps}
	if got != want {
		t.Errorf("%s: (σ, μ, ε) bits %x, want %x", label, got, want)
	}
}

// WalkTypes calls visit(ty, path) once for every type reachable by reflection from the types of
// roots, depth first: through pointers, slices, arrays, maps, channels and struct fields (not
// through interfaces, which visit may reject). path is the root's type name followed by "[]"
// for each element step and ".Field" for each field. A type already visited, from any root, is
// not visited again.
func WalkTypes(visit func(ty reflect.Type, path string), roots ...any) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		if seen[ty] {
			return
		}
		seen[ty] = true
		visit(ty, path)
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map, reflect.Chan:
			walk(ty.Elem(), path+"[]")
		case reflect.Struct:
			for i := 0; i < ty.NumField(); i++ {
				walk(ty.Field(i).Type, path+"."+ty.Field(i).Name)
			}
		}
	}
	for _, r := range roots {
		ty := reflect.TypeOf(r)
		walk(ty, ty.Name())
	}
}
