package counter

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/privacy/stattest"
)

func TestLevels(t *testing.T) {
	for _, c := range []struct{ tMax, want int }{{0, 0}, {1, 1}, {2, 2}, {3, 2}, {4, 3}, {7, 3}, {8, 4}, {49999, 16}, {65535, 16}, {65536, 17}} {
		if got := Levels(c.tMax); got != c.want {
			t.Errorf("Levels(%d) = %d, want %d", c.tMax, got, c.want)
		}
	}
}

// TestTreeExactWithoutNoise: with noise off, every prefix equals the exact sum (small integers,
// so the comparison is exact), NodesInPrefix = popcount(t), and one node is created per insert.
func TestTreeExactWithoutNoise(t *testing.T) {
	for _, tMax := range []int{1, 2, 5, 16, 100, 1000} {
		c, err := NewTree(TreeConfig{Dim: 3, Capacity: tMax}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p := c.Prefix(); p[0] != 0 || p[1] != 0 || p[2] != 0 {
			t.Fatalf("prefix before any insert = %v", p)
		}
		r := rand.New(rand.NewPCG(1, uint64(tMax)))
		sum := make([]float64, 3)
		x := make([]float64, 3)
		for i := 1; i <= tMax; i++ {
			for j := range x {
				x[j] = float64(r.IntN(7) - 3)
				sum[j] += x[j]
			}
			if err := c.Insert(x); err != nil {
				t.Fatal(err)
			}
			for j := range x {
				x[j] = 99 // the counter must have copied x
			}
			for j, v := range c.Prefix() {
				if v != sum[j] {
					t.Fatalf("tMax=%d t=%d coord %d: prefix %g, want %g", tMax, i, j, v, sum[j])
				}
			}
			if c.NodesInPrefix() != bits.OnesCount(uint(i)) {
				t.Fatalf("NodesInPrefix(%d) = %d", i, c.NodesInPrefix())
			}
		}
		if c.NodesCreated() != tMax || c.Len() != tMax {
			t.Fatalf("created %d nodes after %d inserts", c.NodesCreated(), tMax)
		}
		if err := c.Insert(x); err == nil {
			t.Fatalf("insert %d beyond capacity %d accepted", tMax+1, tMax)
		}
		if len(c.alpha) != Levels(tMax) {
			t.Fatalf("memory: %d levels, want L = %d", len(c.alpha), Levels(tMax))
		}
	}
}

func TestTreeBadInput(t *testing.T) {
	for _, cfg := range []TreeConfig{
		{Dim: 0, Capacity: 3},
		{Dim: 1, Capacity: 0},
		{Dim: 1, Capacity: 3, Node: noise.LaplaceNoise(-1)},
		{Dim: 1, Capacity: 3, Node: noise.GaussianNoise(math.NaN())},
		{Dim: 2, Capacity: 3, CoordScale: []float64{1}},
		{Dim: 1, Capacity: 3, Node: noise.LaplaceNoise(1)}, // no source
	} {
		if _, err := NewTree(cfg, nil); err == nil {
			t.Errorf("NewTree(%+v) accepted", cfg)
		}
	}
	c, _ := NewTree(TreeConfig{Dim: 2, Capacity: 3}, nil)
	if err := c.Insert([]float64{1}); err == nil {
		t.Error("wrong-length element accepted")
	}
}

// TestTouches checks the number of released nodes containing element s against an explicit
// enumeration of the dyadic nodes ((q−1)2^i, q2^i] completed by tMax, and that it is ≤ L.
func TestTouches(t *testing.T) {
	for _, tMax := range []int{1, 7, 8, 13, 100} {
		L := Levels(tMax)
		for s := 1; s <= tMax; s++ {
			n := 0
			for i := 0; 1<<i <= tMax; i++ {
				for q := 1; q<<i <= tMax; q++ {
					if (q-1)<<i < s && s <= q<<i {
						n++
					}
				}
			}
			if got := Touches(s, tMax); got != n || got > L {
				t.Fatalf("Touches(%d, %d) = %d, enumeration %d, L = %d", s, tMax, got, n, L)
			}
		}
	}
}

// TestTreeNoiseStructure uses one wide tree (every coordinate is an independent run) to check
// that the prefix error at time t has variance popcount(t)·Var(node) and that errors at times
// t, t' share exactly their common nodes: Cov = Var(node)·|common nodes|. Tolerance: 5 standard
// errors of the sample (co)variance, sd ≈ Var·sqrt((κ+2)/n) with κ ≤ 3 (Laplace excess kurtosis).
func TestTreeNoiseStructure(t *testing.T) {
	const n, T = 200000, 16
	for _, cal := range []noise.Calibration{noise.LaplaceNoise(1.5), noise.GaussianNoise(2)} {
		src := noise.NewSeeded(rand.New(rand.NewPCG(7, 11)))
		c, err := NewTree(TreeConfig{Dim: n, Capacity: T, Node: cal}, src)
		if err != nil {
			t.Fatal(err)
		}
		zero := make([]float64, n)
		errs := make([][]float64, T+1)
		for i := 1; i <= T; i++ {
			if err := c.Insert(zero); err != nil {
				t.Fatal(err)
			}
			errs[i] = append([]float64(nil), c.Prefix()...)
		}
		v := cal.Variance()
		nodes := func(t int) map[[2]int]bool { // the dyadic nodes summed in prefix t
			m := map[[2]int]bool{}
			end := 0
			for i := bits.Len(uint(t)) - 1; i >= 0; i-- {
				if t&(1<<i) != 0 {
					end += 1 << i
					m[[2]int{i, end}] = true
				}
			}
			return m
		}
		for _, pair := range [][2]int{{1, 1}, {3, 3}, {7, 7}, {15, 15}, {16, 16}, {3, 4}, {5, 7}, {6, 7}, {12, 13}, {15, 16}} {
			a, b := errs[pair[0]], errs[pair[1]]
			cov := 0.0
			for k := range a {
				cov += a[k] * b[k]
			}
			cov /= n
			common := 0
			nb := nodes(pair[1])
			for k := range nodes(pair[0]) {
				if nb[k] {
					common++
				}
			}
			want := v * float64(common)
			tol := 5 * v * math.Sqrt(5/float64(n)) * math.Max(1, float64(common))
			if math.Abs(cov-want) > tol {
				t.Errorf("%s: Cov(err(%d), err(%d)) = %.4f, want %.4f ± %.4f", cal, pair[0], pair[1], cov, want, tol)
			}
		}
	}
}

// TestTreeStatisticalPrivacy is a StatDP-style test of the Laplace tree counter (ε = 1): two
// neighbouring 0/1 streams of length 8 that differ in element 1, which enters L = 4 nodes; with
// node scale b = L/ε the releases are ε-DP. The observed statistic is the sum of the four
// released prefixes that contain element 1 (the likelihood-ratio direction). Each coordinate of
// a wide counter is one independent run. The correct counter must not be flagged; the broken one
// (node noise halved, really 2ε-DP) must be.
func TestTreeStatisticalPrivacy(t *testing.T) {
	const n, T, eps = 400000, 8, 1.0
	L := Levels(T)
	stat := func(first float64, scale float64, seed uint64) []float64 {
		src := noise.NewSeeded(rand.New(rand.NewPCG(seed, 99)))
		c, err := NewTree(TreeConfig{Dim: n, Capacity: T, Node: noise.LaplaceNoise(scale)}, src)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, n)
		x := make([]float64, n)
		for i := 1; i <= T; i++ {
			v := 0.0
			if i == 1 {
				v = first
			}
			for k := range x {
				x[k] = v
			}
			if err := c.Insert(x); err != nil {
				t.Fatal(err)
			}
			if i == 1 || i == 2 || i == 4 || i == 8 {
				for k, p := range c.Prefix() {
					out[k] += p
				}
			}
		}
		return out
	}
	taus := []float64{6, 10, 14, 18, 22}
	check := func(scale float64, seed uint64) (minP float64) {
		d, dp := stat(1, scale, seed), stat(0, scale, seed+1)
		r := rand.New(rand.NewPCG(seed, 5))
		minP = 1
		for _, tau := range taus {
			cD, cDp := 0, 0
			for k := range d {
				if d[k] > tau {
					cD++
				}
				if dp[k] > tau {
					cDp++
				}
			}
			p := stattest.DPEventTest(cD, n, cDp, n, eps, r)
			minP = math.Min(minP, p)
		}
		return minP
	}
	b := float64(L) / eps
	if p := check(b, 1); p < 0.01/float64(len(taus)) {
		t.Errorf("correct counter flagged: min p-value %g", p)
	}
	if p := check(b/2, 3); p > 1e-6 {
		t.Errorf("broken counter (noise halved) not flagged: min p-value %g", p)
	}
}

// countingSource counts the noise draws a mechanism makes (a node redrawn at a release, or a
// prefix noised afresh, shows up as extra draws).
type countingSource struct {
	noise.Source
	draws int
}

func (c *countingSource) AddLaplace(x, b float64) float64 {
	c.draws++
	return c.Source.AddLaplace(x, b)
}

func (c *countingSource) AddGaussian(x, s float64) float64 {
	c.draws++
	return c.Source.AddGaussian(x, s)
}

// TestTreeNodeNoiseDrawnOnce: each Insert completes exactly one node and draws exactly Dim
// noise values for it; releasing (Prefix) draws nothing; and, since node noise is reused, the
// releases at t − 1 and t, t odd, differ by exactly the new leaf node (whose noise is the
// only fresh draw): with a zero stream, Prefix(2^j + 1) − Prefix(2^j) equals the node value drawn
// by a twin source with the same key. A tree that redraws live nodes at a release fails.
func TestTreeNodeNoiseDrawnOnce(t *testing.T) {
	const dim, T = 3, 16
	for _, cal := range []noise.Calibration{noise.LaplaceNoise(0.8), noise.GaussianNoise(1.3)} {
		src := &countingSource{Source: noise.NewSecureFromKey([32]byte{4})}
		c, err := NewTree(TreeConfig{Dim: dim, Capacity: T, Node: cal}, src)
		if err != nil {
			t.Fatal(err)
		}
		twin := noise.NewSecureFromKey([32]byte{4}) // replays the node draws in order
		zero := make([]float64, dim)
		prev := make([]float64, dim)
		for i := 1; i <= T; i++ {
			if err := c.Insert(zero); err != nil {
				t.Fatal(err)
			}
			node := make([]float64, dim)
			for k := range node {
				node[k] = cal.Add(0, 1, twin)
			}
			_ = c.Prefix()
			_ = c.Prefix()
			if src.draws != i*dim {
				t.Fatalf("%s: %d draws after %d insertions, want %d (one node of %d coordinates per insertion)", cal, src.draws, i, i*dim, dim)
			}
			p := c.Prefix()
			if i%2 == 1 { // odd i: the live nodes of i−1 stay, one leaf node is added
				for k := range p {
					want := prev[k] + node[k]
					if i == 1 {
						want = node[k]
					}
					if p[k] != want {
						t.Fatalf("%s: Prefix(%d)[%d] = %g, want Prefix(%d) + new node = %g: node noise was not reused", cal, i, k, p[k], i-1, want)
					}
				}
			}
			if i&(i-1) == 0 && i > 1 { // i = 2^j: one node covering everything, drawn just now
				for k := range p {
					if p[k] != node[k] {
						t.Fatalf("%s: Prefix(%d)[%d] = %g, want the single covering node %g", cal, i, k, p[k], node[k])
					}
				}
			}
			copy(prev, p)
		}
	}
}

// TestTreeSecureReleasesOnGrid: with the Secure source every node is the node's exact sum
// rounded to the grid plus grid noise, so every released prefix of float data is an exact
// multiple of the grid step of its coordinate's noise scale (practical-privacy spec §7).
func TestTreeSecureReleasesOnGrid(t *testing.T) {
	const dim, T = 4, 13
	scales := []float64{1, math.Sqrt2, 1, 1 / math.Sqrt2}
	for _, cal := range []noise.Calibration{noise.LaplaceNoise(0.37), noise.GaussianNoise(2.1)} {
		for _, cs := range [][]float64{nil, scales} {
			c, err := NewTree(TreeConfig{Dim: dim, Capacity: T, Node: cal, CoordScale: cs}, noise.NewSecureFromKey([32]byte{5}))
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float64, dim)
			for i := 1; i <= T; i++ {
				for k := range x {
					x[k] = 0.1*float64(i) + 0.01*float64(k) + 1e-9
				}
				if err := c.Insert(x); err != nil {
					t.Fatal(err)
				}
				for k, v := range c.Prefix() {
					m := 1.0
					if cs != nil {
						m = cs[k]
					}
					g := noise.LaplaceGranularity(cal.Scale * m)
					if cal.Kind == noise.Gaussian {
						g = noise.GaussianGranularity(cal.Scale * m)
					}
					if q := v / g; q != math.Trunc(q) {
						t.Fatalf("%s scales %v: Prefix(%d)[%d] = %g is not on the grid %g", cal, cs, i, k, v, g)
					}
				}
			}
		}
	}
}
