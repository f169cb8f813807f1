package countertest_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/counter/countertest"
	"github.com/dprl/dprl/privacy/noise"
)

// toeplitz is a naive Toeplitz-factorisation counter written independently of package counter,
// with switches that break it on purpose.
type toeplitz struct {
	cfg            counter.GaussianConfig
	src            noise.Source
	t              int
	noiseC, report []float64 // decoder coefficients used, and those reported
	sfReport       []float64 // coefficients whose column norm is reported as the sensitivity factor
	redraw         bool      // BROKEN: fresh noise at every release, with the right marginal std
	div            float64   // BROKEN if ≠ 1: noise divided by div
	dataScale      bool      // BROKEN: noise scale grows with the data
	sum, prefix    []float64
	zs             [][]float64
}

func newToeplitz(cfg counter.GaussianConfig, src noise.Source, noiseC, report, sfReport []float64) (*toeplitz, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Sigma > 0 && src == nil {
		return nil, fmt.Errorf("no source")
	}
	return &toeplitz{cfg: cfg, src: src, noiseC: noiseC, report: report, sfReport: sfReport, div: 1,
		sum: make([]float64, cfg.Dim), prefix: make([]float64, cfg.Dim)}, nil
}

func (c *toeplitz) Dim() int             { return c.cfg.Dim }
func (c *toeplitz) Capacity() int        { return c.cfg.Capacity }
func (c *toeplitz) Len() int             { return c.t }
func (c *toeplitz) Prefix() []float64    { return c.prefix }
func (c *toeplitz) NodesInPrefix() int   { return c.t }
func (c *toeplitz) NodesPerElement() int { return c.cfg.Capacity }
func (c *toeplitz) Sigma() float64       { return c.cfg.Sigma }
func (c *toeplitz) PrefixStd() float64   { return c.StdAt(c.t) }
func (c *toeplitz) SensitivityFactor() float64 {
	s := 0.0
	for _, v := range c.sfReport[:c.cfg.Capacity] {
		s += v * v
	}
	return math.Sqrt(s)
}
func (c *toeplitz) StdAt(t int) float64 {
	if t < 0 || t > c.cfg.Capacity {
		return math.NaN()
	}
	s := 0.0
	for _, v := range c.report[:t] {
		s += v * v
	}
	return c.cfg.Sigma * math.Sqrt(s)
}

func (c *toeplitz) Insert(x []float64) error {
	if len(x) != c.cfg.Dim || c.t >= c.cfg.Capacity {
		return fmt.Errorf("bad insert")
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("bad value")
		}
	}
	c.t++
	gamma := 0.0
	if c.src != nil && c.src.Secure() && c.cfg.Sigma > 0 {
		m := 1.0
		if c.cfg.CoordScale != nil {
			m = math.Inf(1)
			for _, s := range c.cfg.CoordScale {
				m = math.Min(m, s)
			}
		}
		gamma = noise.GaussianGranularity(c.cfg.Sigma * m)
	}
	z := make([]float64, c.cfg.Dim)
	for k := range z {
		v := x[k]
		if gamma > 0 {
			v = math.Floor(v/gamma+0.5) * gamma
		}
		c.sum[k] += v
		s := c.cfg.Sigma / c.div
		if c.cfg.CoordScale != nil {
			s *= c.cfg.CoordScale[k]
		}
		if c.dataScale {
			s *= 1 + math.Abs(x[k])
		}
		if c.redraw {
			s *= c.StdAt(c.t) / c.cfg.Sigma
		}
		if s > 0 {
			z[k] = c.src.AddGaussian(0, s)
		}
	}
	c.zs = append(c.zs, z)
	for k := range c.prefix {
		n := 0.0
		if c.redraw {
			n = z[k]
		} else {
			for j := 1; j <= c.t; j++ {
				n += c.noiseC[c.t-j] * c.zs[j-1][k]
			}
		}
		if gamma > 0 {
			n = math.Floor(n/gamma+0.5) * gamma
		}
		c.prefix[k] = c.sum[k] + n
	}
	return nil
}

// TestSuiteRejectsBroken: the naive square-root counter passes every check, and every
// deliberately broken variant fails the check named for it.
func TestSuiteRejectsBroken(t *testing.T) {
	const n = 64
	c := counter.SqrtCoefficients(n)
	c2 := make([]float64, n) // wrong coefficients: c_k² (the factorisation of A^{?}, not A^{1/2})
	for k, v := range c {
		c2[k] = v * v
	}
	type variant struct {
		name     string
		mod      func(*toeplitz)
		noiseC   []float64
		report   []float64
		sfReport []float64
		fails    []string // checks that must fail (nil: all must pass)
	}
	for _, v := range []variant{
		{name: "correct", noiseC: c, report: c, sfReport: c},
		{name: "redrawn-per-release", noiseC: c, report: c, sfReport: c, mod: func(t *toeplitz) { t.redraw = true }, fails: []string{"Factorization"}},
		{name: "noise-div4", noiseC: c, report: c, sfReport: c, mod: func(t *toeplitz) { t.div = 4 }, fails: []string{"Factorization", "Variance", "Secure"}},
		{name: "wrong-coefficients", noiseC: c2, report: c, sfReport: c, fails: []string{"Factorization", "Variance", "Secure"}},
		{name: "wrong-coefficients-consistent-variance", noiseC: c2, report: c2, sfReport: c, fails: []string{"Factorization"}},
		{name: "noise-scale-from-data", noiseC: c, report: c, sfReport: c, mod: func(t *toeplitz) { t.dataScale = true }, fails: []string{"Factorization", "Variance", "Secure"}},
	} {
		t.Run(v.name, func(t *testing.T) {
			f := func(cfg counter.GaussianConfig, src noise.Source) (counter.GaussianCounter, error) {
				tc, err := newToeplitz(cfg, src, v.noiseC, v.report, v.sfReport)
				if err == nil && v.mod != nil {
					v.mod(tc)
				}
				return tc, err
			}
			for _, ch := range countertest.Checks() {
				err := ch.Fn(f)
				mustFail := false
				for _, name := range v.fails {
					mustFail = mustFail || name == ch.Name
				}
				switch {
				case mustFail && err == nil:
					t.Errorf("%s: check %s passed a broken counter", v.name, ch.Name)
				case !mustFail && err != nil:
					t.Errorf("%s: check %s: %v", v.name, ch.Name, err)
				case err != nil:
					t.Logf("%s rejected by %s: %v", v.name, ch.Name, err)
				}
			}
		})
	}
}

// TestGaussianTreePasses runs the suite on the Gaussian tree.
func TestGaussianTreePasses(t *testing.T) {
	countertest.Run(t, func(cfg counter.GaussianConfig, src noise.Source) (counter.GaussianCounter, error) {
		return counter.NewGaussianTree(cfg, src)
	})
}
