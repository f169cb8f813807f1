// Package countertest is the shared test suite every counter.GaussianCounter must pass
// (practical-privacy spec §3; style guide "a shared test suite that every distribution must
// pass"). It checks, black-box:
//
//   - Exact: with σ = 0 every prefix is the exact running sum; bad input is rejected; the
//     element is copied; StdAt is 0 at t = 0 and NaN outside [0, Capacity].
//   - Factorization: the decoder B of y = A x + B z is reconstructed by feeding unit impulses
//     through a scripted noise source (one impulse per draw); the releases must be exactly
//     A x + B z (superposition with data, so noise that depends on the data fails), the row
//     norms of B must equal StdAt(t)/σ and PrefixStd, and the reported SensitivityFactor must
//     be at least the brute-force max column norm of the minimum-norm encoder C = Bᵀ(BBᵀ)⁻¹A —
//     the smallest max column norm of any encoder with A = B C — and equal to it when B is
//     square (C then unique). A counter that redraws its noise at every release or uses other
//     coefficients than it reports fails here.
//   - Variance: over many seeded runs the empirical variance of every coordinate of every
//     release equals (StdAt(t)·σ-scale)² and the covariance of consecutive releases equals
//     σ²(BBᵀ)_{t,t+1}, within 5 standard errors of the sample (co)variance (chi-square /
//     normal-product variance); noise/4 or a wrong reported variance fails here.
//   - Secure: with a Secure source the data enter only through their rounding to the grid
//     γ = noise.GaussianGranularity(σ·min CoordScale) (inputs x and round(x) give bit-identical
//     releases) and the variances still match.
//
// Each check is a function returning an error, so tests can assert that a deliberately broken
// counter is rejected (see the package's tests).
package countertest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

// Factory builds the counter under test. src is nil when cfg.Sigma = 0.
type Factory func(cfg counter.GaussianConfig, src noise.Source) (counter.GaussianCounter, error)

// Check is one named check of the suite.
type Check struct {
	Name string
	Fn   func(Factory) error
}

// Checks returns the suite's checks in order.
func Checks() []Check {
	return []Check{
		{"Exact", CheckExact},
		{"Factorization", CheckFactorization},
		{"Variance", CheckVariance},
		{"Secure", CheckSecure},
	}
}

// Run runs every check as a subtest of t.
func Run(t *testing.T, f Factory) {
	t.Helper()
	for _, c := range Checks() {
		t.Run(c.Name, func(t *testing.T) {
			if err := c.Fn(f); err != nil {
				t.Error(err)
			}
		})
	}
}

// CheckExact verifies exact prefixes without noise and the input contract.
func CheckExact(f Factory) error {
	for _, T := range []int{1, 2, 5, 16, 37} {
		const dim = 3
		c, err := f(counter.GaussianConfig{Dim: dim, Capacity: T}, nil)
		if err != nil {
			return fmt.Errorf("T=%d, sigma=0: %w", T, err)
		}
		if c.Dim() != dim || c.Capacity() != T || c.Len() != 0 {
			return fmt.Errorf("T=%d: Dim/Capacity/Len = %d/%d/%d", T, c.Dim(), c.Capacity(), c.Len())
		}
		for k, v := range c.Prefix() {
			if v != 0 {
				return fmt.Errorf("T=%d: prefix[%d] = %v before any insertion", T, k, v)
			}
		}
		if c.PrefixStd() != 0 || c.StdAt(0) != 0 {
			return fmt.Errorf("T=%d: PrefixStd/StdAt(0) = %v/%v before any insertion, want 0", T, c.PrefixStd(), c.StdAt(0))
		}
		r := rand.New(rand.NewPCG(1, uint64(T)))
		sum := make([]float64, dim)
		x := make([]float64, dim)
		for i := 1; i <= T; i++ {
			for k := range x {
				x[k] = float64(r.IntN(21)-10) + 0.25*float64(r.IntN(4))
				sum[k] += x[k]
			}
			if err := c.Insert(x); err != nil {
				return fmt.Errorf("T=%d insert %d: %w", T, i, err)
			}
			for k := range x {
				x[k] = 1e6 // the counter must have copied x
			}
			for k, v := range c.Prefix() {
				if math.Abs(v-sum[k]) > 1e-9*(1+math.Abs(sum[k])) {
					return fmt.Errorf("T=%d t=%d coord %d: prefix %v, want exact sum %v", T, i, k, v, sum[k])
				}
			}
			if c.Len() != i {
				return fmt.Errorf("T=%d: Len = %d after %d inserts", T, c.Len(), i)
			}
			if c.PrefixStd() != 0 {
				return fmt.Errorf("T=%d: PrefixStd = %v with sigma = 0", T, c.PrefixStd())
			}
		}
		if err := c.Insert(x); err == nil {
			return fmt.Errorf("T=%d: insert beyond capacity accepted", T)
		}
		if c.Len() != T {
			return fmt.Errorf("T=%d: failed insert changed Len to %d", T, c.Len())
		}
	}
	c, err := f(counter.GaussianConfig{Dim: 2, Capacity: 4, Sigma: 1}, noise.NewSeeded(rand.New(rand.NewPCG(1, 1))))
	if err != nil {
		return err
	}
	if err := c.Insert([]float64{1}); err == nil {
		return errors.New("element of wrong length accepted")
	}
	if err := c.Insert([]float64{1, math.NaN()}); err == nil {
		return errors.New("NaN element accepted")
	}
	if c.Len() != 0 {
		return fmt.Errorf("rejected inserts changed Len to %d", c.Len())
	}
	if !math.IsNaN(c.StdAt(-1)) || !math.IsNaN(c.StdAt(5)) || c.StdAt(0) != 0 || !(c.StdAt(1) > 0) {
		return fmt.Errorf("StdAt(-1, 0, 1, 5) = %v, %v, %v, %v; want NaN, 0, > 0, NaN", c.StdAt(-1), c.StdAt(0), c.StdAt(1), c.StdAt(5))
	}
	if c.Sigma() != 1 {
		return fmt.Errorf("Sigma = %v, want 1", c.Sigma())
	}
	for _, bad := range []counter.GaussianConfig{
		{Dim: 0, Capacity: 3}, {Dim: 1, Capacity: 0}, {Dim: 1, Capacity: 3, Sigma: -1},
		{Dim: 1, Capacity: 3, Sigma: math.NaN()}, {Dim: 2, Capacity: 3, CoordScale: []float64{1}},
		{Dim: 1, Capacity: 3, CoordScale: []float64{0}}, {Dim: 1, Capacity: 3, Sigma: 1}, // no source
	} {
		if _, err := f(bad, nil); err == nil {
			return fmt.Errorf("config %+v accepted", bad)
		}
	}
	return nil
}

// scripted is a noise.Source whose i-th Gaussian draw is σ·vals[i] (0 beyond vals). It counts
// the draws.
type scripted struct {
	vals []float64
	n    int
}

func (s *scripted) AddLaplace(x, b float64) float64 {
	panic("countertest: Laplace draw in a Gaussian counter")
}
func (s *scripted) AddGaussian(x, sigma float64) float64 {
	v := 0.0
	if s.n < len(s.vals) {
		v = s.vals[s.n]
	}
	s.n++
	return x + sigma*v
}
func (s *scripted) Secure() bool { return false }

// releases runs a dim-1 counter over data with the scripted draws and returns every release,
// the reported PrefixStd after each insert and the number of draws.
func releases(f Factory, T int, data, draws []float64) (y, std []float64, n int, c counter.GaussianCounter, err error) {
	src := &scripted{vals: draws}
	c, err = f(counter.GaussianConfig{Dim: 1, Capacity: T, Sigma: 1}, src)
	if err != nil {
		return nil, nil, 0, nil, err
	}
	y = make([]float64, T)
	std = make([]float64, T)
	for t := 0; t < T; t++ {
		if err := c.Insert([]float64{data[t]}); err != nil {
			return nil, nil, 0, nil, err
		}
		y[t] = c.Prefix()[0]
		std[t] = c.PrefixStd()
	}
	return y, std, src.n, c, nil
}

// Decoder reconstructs the decoder B (T rows, one column per draw, in units of σ) of a dim-1
// counter of capacity T by feeding unit impulses through a scripted source.
func Decoder(f Factory, T int) (*mat.Dense, error) {
	zeros := make([]float64, T)
	_, _, n, _, err := releases(f, T, zeros, nil)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("T=%d: the counter drew no noise", T)
	}
	B := mat.NewDense(T, n, nil)
	imp := make([]float64, n)
	for i := 0; i < n; i++ {
		clear(imp)
		imp[i] = 1
		y, _, m, _, err := releases(f, T, zeros, imp)
		if err != nil {
			return nil, err
		}
		if m != n {
			return nil, fmt.Errorf("T=%d: the number of draws changed from %d to %d with the noise values", T, n, m)
		}
		for t := 0; t < T; t++ {
			B.Set(t, i, y[t])
		}
	}
	return B, nil
}

// MinNormEncoderFactor returns max_j ‖C e_j‖₂ for the minimum-norm solution C = Bᵀ(BBᵀ)⁻¹A of
// B C = A (A the T×T prefix-sum matrix): for every column the smallest norm of any encoder
// column that B decodes to A's, hence the smallest sensitivity factor any encoder of B has.
func MinNormEncoderFactor(B *mat.Dense) (float64, error) {
	T, _ := B.Dims()
	var G mat.SymDense
	G.SymOuterK(1, B)
	var ch mat.Cholesky
	if !ch.Factorize(&G) {
		return 0, errors.New("B Bᵀ is singular: some release is not a combination of independent draws")
	}
	A := mat.NewDense(T, T, nil)
	for i := 0; i < T; i++ {
		for j := 0; j <= i; j++ {
			A.Set(i, j, 1)
		}
	}
	var W, C mat.Dense
	if err := ch.SolveTo(&W, A); err != nil {
		return 0, fmt.Errorf("solving B Bᵀ W = A: %w", err)
	}
	C.Mul(B.T(), &W)
	best := 0.0
	for j := 0; j < T; j++ {
		best = math.Max(best, mat.Norm(C.ColView(j), 2))
	}
	return best, nil
}

// CheckFactorization reconstructs B and checks superposition, reported variances and the
// reported sensitivity factor.
func CheckFactorization(f Factory) error {
	for _, T := range []int{1, 7, 16, 24} {
		B, err := Decoder(f, T)
		if err != nil {
			return err
		}
		_, n := B.Dims()
		// Superposition: random data and random draws give A x + B z.
		r := rand.New(rand.NewPCG(2, uint64(T)))
		data, draws := make([]float64, T), make([]float64, n)
		for i := range data {
			data[i] = float64(r.IntN(9) - 4)
		}
		for i := range draws {
			draws[i] = r.NormFloat64()
		}
		y, std, _, c, err := releases(f, T, data, draws)
		if err != nil {
			return err
		}
		sum := 0.0
		for t := 0; t < T; t++ {
			sum += data[t]
			want := sum + mat.Dot(B.RowView(t), mat.NewVecDense(n, draws))
			if math.Abs(y[t]-want) > 1e-9*(1+math.Abs(want)) {
				return fmt.Errorf("T=%d t=%d: release %v is not A x + B z = %v (noise depends on the data?)", T, t+1, y[t], want)
			}
			rowNorm := mat.Norm(B.RowView(t), 2)
			if math.Abs(std[t]-rowNorm) > 1e-9*rowNorm || math.Abs(c.StdAt(t+1)-rowNorm) > 1e-9*rowNorm {
				return fmt.Errorf("T=%d t=%d: PrefixStd %v, StdAt %v, but the decoder's row norm is %v", T, t+1, std[t], c.StdAt(t+1), rowNorm)
			}
		}
		brute, err := MinNormEncoderFactor(B)
		if err != nil {
			return fmt.Errorf("T=%d: %w", T, err)
		}
		sf := c.SensitivityFactor()
		if sf < brute*(1-1e-9) {
			return fmt.Errorf("T=%d: reported SensitivityFactor %v < %v, the smallest max column norm of any encoder of this decoder: the privacy claim is too small", T, sf, brute)
		}
		if used := nonzeroCols(B); used == T && sf > brute*(1+1e-9) {
			return fmt.Errorf("T=%d: reported SensitivityFactor %v, but the (unique) encoder has max column norm %v", T, sf, brute)
		}
	}
	return nil
}

func nonzeroCols(B *mat.Dense) int {
	_, n := B.Dims()
	k := 0
	for j := 0; j < n; j++ {
		if mat.Norm(B.ColView(j), math.Inf(1)) != 0 {
			k++
		}
	}
	return k
}

// momentCheck accumulates the noise of many runs and compares its (co)variances with the
// theory.
func momentCheck(f Factory, cfg counter.GaussianConfig, runs int, newSrc func(run int) noise.Source) error {
	T, dim := cfg.Capacity, cfg.Dim
	B, err := Decoder(f, T)
	if err != nil {
		return err
	}
	var BBt mat.Dense
	BBt.Mul(B, B.T())
	sumsq := make([]float64, T*dim)
	cross := make([]float64, (T-1)*dim)
	var ref counter.GaussianCounter
	x := make([]float64, dim)
	prev := make([]float64, dim)
	for run := 0; run < runs; run++ {
		c, err := f(cfg, newSrc(run))
		if err != nil {
			return err
		}
		ref = c
		sum := make([]float64, dim)
		for t := 0; t < T; t++ {
			for k := range x {
				x[k] = float64((t+k)%5) - 2 + 0.5*float64(k)
				sum[k] += x[k]
			}
			if err := c.Insert(x); err != nil {
				return err
			}
			for k, v := range c.Prefix() {
				e := v - sum[k]
				sumsq[t*dim+k] += e * e
				if t > 0 {
					cross[(t-1)*dim+k] += e * prev[k]
				}
				prev[k] = e
			}
		}
	}
	n := float64(runs)
	for t := 0; t < T; t++ {
		for k := 0; k < dim; k++ {
			s := cfg.Sigma
			if cfg.CoordScale != nil {
				s *= cfg.CoordScale[k]
			}
			v := math.Pow(ref.StdAt(t+1)/cfg.Sigma*s, 2)
			got := sumsq[t*dim+k] / n // mean zero: n·s²/v ~ χ²_n
			if math.Abs(got/v-1) > 5*math.Sqrt(2/n) {
				return fmt.Errorf("release %d coord %d: empirical noise variance %.4g over %d runs, reported %.4g (ratio %.3f, tolerance ±%.3f)", t+1, k, got, runs, v, got/v, 5*math.Sqrt(2/n))
			}
			if t == 0 {
				continue
			}
			vp := math.Pow(ref.StdAt(t)/cfg.Sigma*s, 2)
			cov := BBt.At(t, t-1) * s * s
			gotCov := cross[(t-1)*dim+k] / n
			se := math.Sqrt((v*vp + cov*cov) / n)
			if math.Abs(gotCov-cov) > 5*se {
				return fmt.Errorf("releases %d,%d coord %d: empirical noise covariance %.4g, decoder says %.4g (±%.3g): noise not reused as the factorisation says", t, t+1, k, gotCov, cov, 5*se)
			}
		}
	}
	return nil
}

// CheckVariance compares empirical and reported noise variances and consecutive covariances
// over 3 000 seeded runs.
func CheckVariance(f Factory) error {
	cfg := counter.GaussianConfig{Dim: 2, Capacity: 32, Sigma: 2, CoordScale: []float64{1, 0.5}}
	return momentCheck(f, cfg, 3000, func(run int) noise.Source {
		return noise.NewSeeded(rand.New(rand.NewPCG(11, uint64(run))))
	})
}

// gridOf returns the secure grid the suite expects for cfg: GaussianGranularity(σ·min scale).
func gridOf(cfg counter.GaussianConfig) float64 {
	m := 1.0
	if cfg.CoordScale != nil {
		m = math.Inf(1)
		for _, s := range cfg.CoordScale {
			m = math.Min(m, s)
		}
	}
	return noise.GaussianGranularity(cfg.Sigma * m)
}

// SecureRun feeds the elements x(t, k) (t < cfg.Capacity, k < cfg.Dim) to a fresh counter of f
// with a Secure source keyed with key and returns every release.
func SecureRun(f Factory, cfg counter.GaussianConfig, key [32]byte, x func(t, k int) float64) ([][]float64, error) {
	c, err := f(cfg, noise.NewSecureFromKey(key))
	if err != nil {
		return nil, err
	}
	var out [][]float64
	e := make([]float64, cfg.Dim)
	for t := 0; t < cfg.Capacity; t++ {
		for k := range e {
			e[k] = x(t, k)
		}
		if err := c.Insert(e); err != nil {
			return nil, err
		}
		out = append(out, append([]float64(nil), c.Prefix()...))
	}
	return out, nil
}

// CheckSecure checks that with a Secure source data enter only through their rounding to the
// grid, and that the variances still match (1 000 runs).
func CheckSecure(f Factory) error {
	cfg := counter.GaussianConfig{Dim: 2, Capacity: 12, Sigma: 3, CoordScale: []float64{1, 2}}
	gamma := gridOf(cfg)
	key := [32]byte{7}
	run := func(x func(t, k int) float64) ([][]float64, error) { return SecureRun(f, cfg, key, x) }
	raw := func(t, k int) float64 { return 0.3 + 0.37*float64(t) - 1.1*float64(k) + gamma*0.49*float64(t%3-1) }
	a, err := run(raw)
	if err != nil {
		return err
	}
	b, err := run(func(t, k int) float64 { return math.Floor(raw(t, k)/gamma+0.5) * gamma })
	if err != nil {
		return err
	}
	for t := range a {
		for k := range a[t] {
			if a[t][k] != b[t][k] || math.IsNaN(a[t][k]) {
				return fmt.Errorf("secure source, release %d coord %d: input x gives %v, its grid rounding gives %v: the data must enter only through round(x) on the grid %g", t+1, k, a[t][k], b[t][k], gamma)
			}
		}
	}
	return momentCheck(f, cfg, 1000, func(run int) noise.Source {
		var k [32]byte
		k[0], k[1], k[2] = 9, byte(run), byte(run>>8)
		return noise.NewSecureFromKey(k)
	})
}
