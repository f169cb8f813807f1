package tabular

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// projInstance is one input of the post-processing LP (spec §3.5).
type projInstance struct {
	nhat     []float64
	M, delta float64
}

func (in projInstance) String() string {
	return fmt.Sprintf("nhat=%v M=%v delta=%v", in.nhat, in.M, in.delta)
}

// randProjInstance draws nhat ∈ [−5,10]^S, M ∈ [−3,40] and delta ∈ {0, 0.3, 1, 5}. About one
// instance in five is made degenerate (integer nhat with ties, M = Σnhat, or M = −delta) to
// exercise the boundary cases of the algorithm.
func randProjInstance(r *rand.Rand, S int) projInstance {
	deltas := [...]float64{0, 0.3, 1, 5}
	in := projInstance{nhat: make([]float64, S), M: -3 + 43*r.Float64(), delta: deltas[r.IntN(len(deltas))]}
	for i := range in.nhat {
		in.nhat[i] = -5 + 15*r.Float64()
	}
	switch r.IntN(20) {
	case 0: // integer counts, many ties
		for i := range in.nhat {
			in.nhat[i] = math.Round(in.nhat[i] / 3)
		}
		in.M = math.Round(in.M)
	case 1: // consistent total
		in.M = 0
		for _, n := range in.nhat {
			in.M += n
		}
	case 2: // window touching 0 from above
		in.M = -in.delta
	case 3: // all negative
		for i := range in.nhat {
			in.nhat[i] = -math.Abs(in.nhat[i])
		}
	}
	return in
}

// lowerUpper returns Lo(t) = Σ max(0, n̂_i − t) and Up(t) = Σ (n̂_i + t).
func lowerUpper(nhat []float64, t float64) (lo, up float64) {
	for _, n := range nhat {
		lo += max(0, n-t)
		up += n + t
	}
	return lo, up
}

// lpFeasible reports whether the LP has a feasible point with value ≤ t, in closed form:
// t ≥ t0 and [Lo(t), Up(t)] meets [M − δ, M + δ].
func lpFeasible(in projInstance, t float64) bool {
	for _, n := range in.nhat {
		if t < -n {
			return false
		}
	}
	lo, up := lowerUpper(in.nhat, t)
	return lo <= in.M+in.delta && up >= in.M-in.delta
}

// checkProjection verifies the properties of spec §3.5/§3.7 item 2 for a Project result and
// returns a description of the first violation, or "".
func checkProjection(in projInstance, x []float64, tStar float64, fb bool, tol float64) string {
	if want := in.M+in.delta < 0; fb != want {
		return fmt.Sprintf("fallback = %v, want %v", fb, want)
	}
	if !(tStar >= 0) {
		return fmt.Sprintf("tStar = %v < 0", tStar)
	}
	dev, sum := 0.0, 0.0
	for i, xi := range x {
		if !(xi >= 0) {
			return fmt.Sprintf("x[%d] = %v < 0", i, xi)
		}
		dev = max(dev, math.Abs(xi-in.nhat[i]))
		sum += xi
	}
	if math.Abs(dev-tStar) > tol {
		return fmt.Sprintf("max|x − nhat| = %.15g, tStar = %.15g", dev, tStar)
	}
	if fb {
		if sum != 0 {
			return fmt.Sprintf("fallback but x = %v, want 0", x)
		}
		return ""
	}
	if math.Abs(sum-in.M) > in.delta+tol {
		return fmt.Sprintf("|Σx − M| = %.15g > delta = %v", math.Abs(sum-in.M), in.delta)
	}
	// Canonical tie-break: Σx is the feasible total closest to M at value t*, and x = (n̂ + λ)_+
	// for a common λ.
	lo, up := lowerUpper(in.nhat, tStar)
	sigma := min(max(in.M, max(lo, in.M-in.delta)), min(up, in.M+in.delta))
	if math.Abs(sum-sigma) > tol {
		return fmt.Sprintf("Σx = %.15g, canonical total %.15g", sum, sigma)
	}
	lambda := math.NaN()
	for i, xi := range x {
		if xi > 0 {
			lambda = xi - in.nhat[i]
			break
		}
	}
	for i, xi := range x {
		switch {
		case math.IsNaN(lambda): // x = 0
		case xi > 0 && math.Abs(xi-in.nhat[i]-lambda) > tol:
			return fmt.Sprintf("x[%d] − nhat[%d] = %v, want common shift %v", i, i, xi-in.nhat[i], lambda)
		case xi == 0 && in.nhat[i]+lambda > tol:
			return fmt.Sprintf("x[%d] = 0 but nhat[%d] + λ = %v > 0", i, i, in.nhat[i]+lambda)
		}
	}
	return ""
}

func TestProjectHandCases(t *testing.T) {
	tests := []struct {
		name     string
		nhat     []float64
		M, delta float64
		wantX    []float64
		wantT    float64
		wantFB   bool
	}{
		{"consistent counts", []float64{1, 2, 3}, 6, 0, []float64{1, 2, 3}, 0, false},
		{"consistent within delta", []float64{0.5, 0.5}, 1.5, 1, []float64{0.5, 0.5}, 0, false},
		{"single state", []float64{3}, 1, 1, []float64{2}, 1, false},
		{"too much mass (tL)", []float64{5, 0}, 1, 0, []float64{1, 0}, 4, false},
		{"too little mass (tU)", []float64{2, 2}, 10, 0, []float64{5, 5}, 3, false},
		{"tU with delta", []float64{1, 1}, 5, 1, []float64{2, 2}, 1, false},
		{"negative entry (t0)", []float64{-1, 3}, 2, 1, []float64{0, 2}, 1, false},
		{"all negative, zero window", []float64{-1, -1}, 0, 0, []float64{0, 0}, 1, false},
		{"window touches zero", []float64{2, -1}, -0.5, 0.5, []float64{0, 0}, 2, false},
		{"infeasible: fallback", []float64{1, -2}, -5, 1, []float64{0, 0}, 2, true},
		{"infeasible, delta 0", []float64{0.5, 0.25}, -1e-3, 0, []float64{0, 0}, 0.5, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, tStar, fb := ProjectCounts(tc.nhat, tc.M, tc.delta)
			if fb != tc.wantFB || math.Abs(tStar-tc.wantT) > 1e-12 {
				t.Fatalf("tStar, fallback = %v, %v; want %v, %v", tStar, fb, tc.wantT, tc.wantFB)
			}
			for i := range x {
				if math.Abs(x[i]-tc.wantX[i]) > 1e-12 {
					t.Fatalf("x = %v, want %v", x, tc.wantX)
				}
			}
			in := projInstance{tc.nhat, tc.M, tc.delta}
			if msg := checkProjection(in, x, tStar, fb, 1e-12); msg != "" {
				t.Fatal(msg)
			}
		})
	}
}

// TestProjectProperties checks spec §3.7 item 2 and the canonical tie-break on 5004 random
// instances: constraints to 1e-9 unless fallback, max|x − nhat| = tStar, fallback iff M + δ < 0.
func TestProjectProperties(t *testing.T) {
	tests := []struct {
		S, n int
	}{{1, 834}, {2, 834}, {3, 834}, {6, 834}, {10, 834}, {50, 834}}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("S=%d", tc.S), func(t *testing.T) {
			r := rand.New(rand.NewPCG(20230403, uint64(tc.S)))
			p := NewProjector(tc.S)
			x := make([]float64, tc.S)
			fallbacks := 0
			for k := range tc.n {
				in := randProjInstance(r, tc.S)
				tStar, fb := p.Project(x, in.nhat, in.M, in.delta)
				if fb {
					fallbacks++
				}
				if msg := checkProjection(in, x, tStar, fb, 1e-9); msg != "" {
					t.Fatalf("instance %d (%v): %s", k, in, msg)
				}
				// x may alias nhat.
				y := append([]float64(nil), in.nhat...)
				if t2, fb2 := p.Project(y, y, in.M, in.delta); t2 != tStar || fb2 != fb || !equalSlices(x, y) {
					t.Fatalf("instance %d (%v): aliased result differs", k, in)
				}
			}
			if fallbacks == 0 || fallbacks == tc.n {
				t.Errorf("fallbacks = %d of %d: generator does not cover both cases", fallbacks, tc.n)
			}
		})
	}
}

func equalSlices(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// simplexOptimum solves the LP (6) with gonum's generic simplex in standard form:
// variables z = (x_1..x_S, t, s_1..s_S, s'_1..s'_S, u, w) ≥ 0 and rows
//
//	 x_i − t + s_i  =  n̂_i       (x_i − t ≤ n̂_i)
//	−x_i − t + s'_i = −n̂_i       (−x_i − t ≤ −n̂_i)
//	 Σx + u         =  M + δ     (Σx ≤ M + δ)
//	−Σx + w         = −(M − δ)   (−Σx ≤ −(M − δ))
//
// minimising t.
func simplexOptimum(in projInstance) (float64, error) {
	S := len(in.nhat)
	rows, cols := 2*S+2, 3*S+3
	A := mat.NewDense(rows, cols, nil)
	b := make([]float64, rows)
	c := make([]float64, cols)
	tcol := S
	c[tcol] = 1
	for i, n := range in.nhat {
		A.Set(i, i, 1)
		A.Set(i, tcol, -1)
		A.Set(i, S+1+i, 1)
		b[i] = n
		A.Set(S+i, i, -1)
		A.Set(S+i, tcol, -1)
		A.Set(S+i, 2*S+1+i, 1)
		b[S+i] = -n
		A.Set(2*S, i, 1)
		A.Set(2*S+1, i, -1)
	}
	A.Set(2*S, 3*S+1, 1)
	b[2*S] = in.M + in.delta
	A.Set(2*S+1, 3*S+2, 1)
	b[2*S+1] = -(in.M - in.delta)
	opt, _, err := lp.Simplex(c, A, b, 1e-10, nil)
	return opt, err
}

// TestProjectMatchesSimplex compares tStar with gonum's simplex optimum on 600 feasible
// instances with S ≤ 6, and checks that the simplex reports infeasibility exactly when Project
// falls back.
func TestProjectMatchesSimplex(t *testing.T) {
	tests := []struct {
		S, feasible, infeasible int
	}{{1, 100, 10}, {2, 100, 10}, {3, 100, 10}, {4, 100, 10}, {5, 100, 10}, {6, 100, 10}}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("S=%d", tc.S), func(t *testing.T) {
			r := rand.New(rand.NewPCG(777, uint64(tc.S)))
			p := NewProjector(tc.S)
			x := make([]float64, tc.S)
			nFeas, nInf := 0, 0
			for nFeas < tc.feasible || nInf < tc.infeasible {
				in := randProjInstance(r, tc.S)
				feasible := in.M+in.delta >= 0
				if (feasible && nFeas >= tc.feasible) || (!feasible && nInf >= tc.infeasible) {
					continue
				}
				tStar, fb := p.Project(x, in.nhat, in.M, in.delta)
				opt, err := simplexOptimum(in)
				if !feasible {
					nInf++
					if !fb || !errors.Is(err, lp.ErrInfeasible) {
						t.Fatalf("%v: fallback = %v, simplex err = %v; want true, ErrInfeasible", in, fb, err)
					}
					continue
				}
				nFeas++
				if err != nil {
					t.Fatalf("%v: simplex: %v", in, err)
				}
				if fb || math.Abs(opt-tStar) > 1e-7 {
					t.Fatalf("%v: tStar = %.12g (fallback %v), simplex optimum %.12g", in, tStar, fb, opt)
				}
			}
		})
	}
}

// TestProjectMatchesBisection recovers OPT by bisection on t with the closed-form feasibility
// test of lpFeasible, for S up to 50.
func TestProjectMatchesBisection(t *testing.T) {
	tests := []struct {
		S, n int
	}{{1, 300}, {2, 300}, {3, 300}, {6, 300}, {10, 300}, {20, 300}, {50, 300}}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("S=%d", tc.S), func(t *testing.T) {
			r := rand.New(rand.NewPCG(4242, uint64(tc.S)))
			p := NewProjector(tc.S)
			x := make([]float64, tc.S)
			for k := 0; k < tc.n; {
				in := randProjInstance(r, tc.S)
				if in.M+in.delta < 0 {
					continue
				}
				k++
				tStar, _ := p.Project(x, in.nhat, in.M, in.delta)
				lo, hi := 0.0, 1.0
				if lpFeasible(in, 0) {
					hi = 0
				}
				for !lpFeasible(in, hi) {
					lo, hi = hi, 2*hi
				}
				for range 200 {
					mid := lo + (hi-lo)/2
					if mid <= lo || mid >= hi {
						break
					}
					if lpFeasible(in, mid) {
						hi = mid
					} else {
						lo = mid
					}
				}
				if math.Abs(hi-tStar) > 1e-9 {
					t.Fatalf("%v: tStar = %.15g, bisection %.15g", in, tStar, hi)
				}
				if !lpFeasible(in, tStar+1e-9) || (tStar > 1e-9 && lpFeasible(in, tStar-1e-9)) {
					t.Fatalf("%v: tStar = %.15g is not the feasibility threshold", in, tStar)
				}
			}
		})
	}
}

// TestProjectLemma54 is spec §3.7 item 3 (Lemma 5.4 of Qiao & Wang 2023): with true counts
// N(s') ∈ N, noisy counts within ±E/4 of N(s') and of N = ΣN(s'), δ = E/4 and the shift of
// eq. (5), Ñ(s') = x_{s'} + E/(2S): tStar ≤ max|N(s') − n̂_{s'}| ≤ E/4, |Ñ(s') − N(s')| ≤ E and
// N ≤ Ñ = ΣÑ(s') ≤ N + E.
func TestProjectLemma54(t *testing.T) {
	// perturb returns the perturbations of the S transition counts (into eps) and of the total,
	// each in [−q, q].
	type perturb func(r *rand.Rand, q float64, eps []float64) float64
	sign := func(r *rand.Rand) float64 { return float64(2*r.IntN(2) - 1) }
	strategies := []struct {
		name string
		f    perturb
	}{
		{"uniform", func(r *rand.Rand, q float64, eps []float64) float64 {
			for i := range eps {
				eps[i] = q * (2*r.Float64() - 1)
			}
			return q * (2*r.Float64() - 1)
		}},
		{"all low", func(r *rand.Rand, q float64, eps []float64) float64 {
			for i := range eps {
				eps[i] = -q
			}
			return -q
		}},
		{"all high", func(r *rand.Rand, q float64, eps []float64) float64 {
			for i := range eps {
				eps[i] = q
			}
			return q
		}},
		{"counts low, total high", func(r *rand.Rand, q float64, eps []float64) float64 {
			for i := range eps {
				eps[i] = -q
			}
			return q
		}},
		{"counts high, total low", func(r *rand.Rand, q float64, eps []float64) float64 {
			for i := range eps {
				eps[i] = q
			}
			return -q
		}},
		{"alternating", func(r *rand.Rand, q float64, eps []float64) float64 {
			for i := range eps {
				eps[i] = q * float64(1-2*(i%2))
			}
			return q * sign(r)
		}},
		{"random extremes", func(r *rand.Rand, q float64, eps []float64) float64 {
			for i := range eps {
				eps[i] = q * sign(r)
			}
			return q * sign(r)
		}},
	}
	// counts fills N(s') with non-negative integers.
	shapes := []struct {
		name string
		f    func(r *rand.Rand, N []float64)
	}{
		{"zero", func(r *rand.Rand, N []float64) { clear(N) }},
		{"one-hot", func(r *rand.Rand, N []float64) {
			clear(N)
			N[r.IntN(len(N))] = float64(1 + r.IntN(50))
		}},
		{"small", func(r *rand.Rand, N []float64) {
			for i := range N {
				N[i] = float64(r.IntN(4))
			}
		}},
		{"large", func(r *rand.Rand, N []float64) {
			for i := range N {
				N[i] = float64(r.IntN(5000))
			}
		}},
	}
	Es := []float64{0, 0.5, 4, 37.5, 5430.6}
	Ss := []int{1, 2, 6, 10}
	const reps = 5
	for si, st := range strategies {
		t.Run(st.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(54, uint64(si)))
			for _, S := range Ss {
				p := NewProjector(S)
				x := make([]float64, S)
				N := make([]float64, S)
				eps := make([]float64, S)
				nhat := make([]float64, S)
				for _, shape := range shapes {
					for _, E := range Es {
						q := E / 4
						tol := 1e-9 * max(1, E)
						for range reps {
							shape.f(r, N)
							epsM := st.f(r, q, eps)
							Ntot, maxDev := 0.0, 0.0
							for i := range N {
								Ntot += N[i]
								nhat[i] = N[i] + eps[i]
								maxDev = max(maxDev, math.Abs(eps[i]))
							}
							M := Ntot + epsM
							tStar, fb := p.Project(x, nhat, M, q)
							where := fmt.Sprintf("S=%d %s E=%v N=%v nhat=%v M=%v", S, shape.name, E, N, nhat, M)
							if fb {
								t.Fatalf("%s: unexpected fallback", where)
							}
							if tStar > maxDev+tol || tStar > q+tol {
								t.Fatalf("%s: tStar = %v > max|N − nhat| = %v (E/4 = %v)", where, tStar, maxDev, q)
							}
							shift := E / (2 * float64(S))
							Ntil := 0.0
							for i := range x {
								nt := x[i] + shift
								Ntil += nt
								if E > 0 && !(nt > 0) {
									t.Fatalf("%s: Ñ(%d) = %v, want > 0", where, i, nt)
								}
								if d := math.Abs(nt - N[i]); d > E/2+shift+tol || d > E+tol {
									t.Fatalf("%s: |Ñ(%d) − N(%d)| = %v > E/2 + E/(2S) = %v", where, i, i, d, E/2+shift)
								}
							}
							if Ntil < Ntot-tol || Ntil > Ntot+E+tol {
								t.Fatalf("%s: Ñ = %v not in [N, N + E] = [%v, %v]", where, Ntil, Ntot, Ntot+E)
							}
						}
					}
				}
			}
		})
	}
}

func TestProjectNoAllocs(t *testing.T) {
	tests := []struct {
		name     string
		nhat     []float64
		M, delta float64
	}{
		{"S=6", []float64{3.2, -1, 0.5, 7, 2, 0}, 10, 1},
		{"S=6 fallback", []float64{3.2, -1, 0.5, 7, 2, 0}, -10, 1},
		{"S=50", func() []float64 {
			v := make([]float64, 50)
			for i := range v {
				v[i] = float64((i*37)%23) - 5
			}
			return v
		}(), 100, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewProjector(len(tc.nhat))
			x := make([]float64, len(tc.nhat))
			if a := testing.AllocsPerRun(200, func() { p.Project(x, tc.nhat, tc.M, tc.delta) }); a != 0 {
				t.Errorf("AllocsPerRun = %v, want 0", a)
			}
		})
	}
}

func TestProjectPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"S=0", func() { NewProjector(0) }},
		{"short x", func() { NewProjector(2).Project(make([]float64, 1), []float64{1, 2}, 3, 0) }},
		{"short nhat", func() { NewProjector(2).Project(make([]float64, 2), []float64{1}, 3, 0) }},
		{"negative delta", func() { NewProjector(1).Project(make([]float64, 1), []float64{1}, 1, -1) }},
		{"NaN delta", func() { NewProjector(1).Project(make([]float64, 1), []float64{1}, 1, math.NaN()) }},
		{"NaN M", func() { NewProjector(1).Project(make([]float64, 1), []float64{1}, math.NaN(), 1) }},
		{"Inf nhat", func() { NewProjector(1).Project(make([]float64, 1), []float64{math.Inf(1)}, 1, 1) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			tc.f()
		})
	}
}

func ExampleProjectCounts() {
	// Noisy counts of 3 next states, one of them negative, and a noisy total that is too large.
	x, tStar, fallback := ProjectCounts([]float64{4, -1, 2}, 9, 1)
	fmt.Println(x, tStar, fallback)
	// Output: [5 0 3] 1 false
}

func BenchmarkProject(b *testing.B) {
	for _, S := range []int{6, 50} {
		b.Run(fmt.Sprintf("S=%d", S), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			ins := make([]projInstance, 1024)
			for i := range ins {
				ins[i] = randProjInstance(r, S)
			}
			p := NewProjector(S)
			x := make([]float64, S)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				in := &ins[i%len(ins)]
				p.Project(x, in.nhat, in.M, in.delta)
				i++
			}
		})
	}
}
