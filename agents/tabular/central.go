package tabular

import (
	"fmt"

	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

// Curator is the server-side privatizer of a trusted-curator (JDP or non-private) agent: it
// receives raw trajectories and releases a Billboard.
type Curator interface {
	// Ingest adds one user's trajectory.
	Ingest(t *model.Trajectory) error
	// Release returns the statistics of all users ingested so far. The billboard is owned by
	// the curator and valid until the next Ingest.
	Release() *Billboard
}

// Sources supplies an independent noise source per named mechanism.
type Sources func(mechanism string) noise.Source

// Central is the Central Privatizer of Qiao & Wang §5.1 (ε-JDP): three families of Laplace
// binary-mechanism counters — N_h(s,a), N_h(s,a,s'), R_h(s,a) — each a vector tree over all its
// streams (identical in distribution to one scalar tree per stream, since node noise is i.i.d.
// per coordinate). Every stream receives an element every episode (mostly 0) and fresh node
// noise on schedule, so the noise pattern does not reveal which pairs were visited (spec
// pitfall 14). The post-processing LP (eq. (4)–(5)) is done by the planner.
type Central struct {
	S, A, H, K int
	priv       PrivacyConfig
	b          float64
	report     PrivacyReport
	f1, f2, f3 counter.Counter
	x1, x2, x3 []float64
	bb         *Billboard
	term       terminal // public terminal states (set by New; none for NewCentral)
}

// NewCentral returns a Central privatizer for K episodes (capacity K−1 insertions: the data of
// episode K is never released, spec pitfall 24). All noise scales are fixed here.
func NewCentral(S, A, H, K int, priv PrivacyConfig, src Sources) (*Central, error) {
	if err := checkShape(S, A, H, K); err != nil {
		return nil, err
	}
	if err := model.CheckSize("central privatizer: ", S, A, H); err != nil {
		return nil, err
	}
	if priv.Model != JDP {
		return nil, fmt.Errorf("central privatizer: privacy model must be jdp, got %s", priv.Model)
	}
	if err := priv.Validate(); err != nil {
		return nil, err
	}
	c := &Central{S: S, A: A, H: H, K: K, priv: priv, bb: newBillboard(S, A, H)}
	n := H * S * A
	c.x1, c.x2, c.x3 = make([]float64, n), make([]float64, n*S), make([]float64, n)
	var err error
	if K <= 1 {
		if c.b, c.report, err = priv.scales(S, A, H, K, false); err != nil {
			return nil, err
		}
		c.refresh()
		return c, nil
	}
	// The kind of source is public: a Secure one rounds to its grid, which the scale accounts
	// for (PrivacyReport.GridStep); the scale is fixed before any data is seen.
	names := []string{"central/visits", "central/transitions", "central/rewards"}
	srcs := make([]noise.Source, len(names))
	secure := false
	for i, name := range names {
		srcs[i] = src(name)
		secure = secure || (srcs[i] != nil && srcs[i].Secure())
	}
	if c.b, c.report, err = priv.scales(S, A, H, K, secure); err != nil {
		return nil, err
	}
	var cs [3]counter.Counter
	for i, dim := range []int{n, n * S, n} {
		t, err := counter.NewTree(counter.TreeConfig{Dim: dim, Capacity: K - 1, Node: noise.LaplaceNoise(c.b)}, srcs[i])
		if err != nil {
			return nil, err
		}
		cs[i] = t
	}
	c.f1, c.f2, c.f3 = cs[0], cs[1], cs[2]
	c.refresh()
	return c, nil
}

// Report returns the accountant's statement of the guarantee.
func (c *Central) Report() PrivacyReport { return c.report }

// Ingest implements Curator. It returns an error after K−1 insertions. It is the JDP privacy
// boundary: states and actions are validated (an error, nothing ingested) and rewards clipped
// to [0, 1] (NaN → 0) here, not in the model, so a hostile client cannot exceed the
// sensitivity the calibration assumes.
func (c *Central) Ingest(t *model.Trajectory) error {
	if c.f1 == nil {
		return fmt.Errorf("central privatizer: K = 1, no data is ever released")
	}
	L, err := validateTrajectory(t, c.S, c.A, c.H, c.term)
	if err != nil {
		return fmt.Errorf("central privatizer: %w", err)
	}
	S, A := c.S, c.A
	// A terminated episode (L < H) inserts its L steps; the other streams get 0, as every
	// stream not visited.
	for h := 0; h < L; h++ {
		i := (h*S+t.S[h])*A + t.A[h]
		c.x1[i], c.x3[i], c.x2[i*S+t.S[h+1]] = 1, clipReward(t.R[h]), 1
	}
	err = c.f1.Insert(c.x1)
	if err == nil {
		err = c.f2.Insert(c.x2)
	}
	if err == nil {
		err = c.f3.Insert(c.x3)
	}
	for h := 0; h < L; h++ {
		i := (h*S+t.S[h])*A + t.A[h]
		c.x1[i], c.x3[i], c.x2[i*S+t.S[h+1]] = 0, 0, 0
	}
	if err != nil {
		return fmt.Errorf("central privatizer: %w", err)
	}
	c.bb.Users = c.f1.Len()
	return nil
}

func (c *Central) refresh() {
	// E covers every release: a prefix sums at most L node noises (spec §3.4). It depends on
	// public parameters only and is the same for every release.
	c.bb.E = c.priv.eBound(c.b, c.report.Levels, c.S, c.A, c.H, c.K)
	if c.f1 == nil {
		return
	}
	// The billboard aliases the counters' prefixes: zero-copy, valid until the next Ingest.
	c.bb.N, c.bb.NT, c.bb.R = c.f1.Prefix(), c.f2.Prefix(), c.f3.Prefix()
	c.bb.Users = c.f1.Len()
}

// Release implements Curator.
func (c *Central) Release() *Billboard { return c.bb }

// Identity is the non-private curator: exact counts, E = 0.
type Identity struct {
	S, A, H int
	bb      *Billboard
	term    terminal // public terminal states (set by New; none for NewIdentity)
}

// NewIdentity returns the non-private curator.
func NewIdentity(S, A, H int) (*Identity, error) {
	if err := checkShape(S, A, H, 1); err != nil {
		return nil, err
	}
	if err := model.CheckSize("curator: ", S, A, H); err != nil {
		return nil, err
	}
	return &Identity{S: S, A: A, H: H, bb: newBillboard(S, A, H)}, nil
}

// Ingest implements Curator.
func (c *Identity) Ingest(t *model.Trajectory) error {
	L, err := validateTrajectory(t, c.S, c.A, c.H, c.term)
	if err != nil {
		return fmt.Errorf("curator: %w", err)
	}
	S, A := c.S, c.A
	for h := 0; h < L; h++ {
		i := (h*S+t.S[h])*A + t.A[h]
		c.bb.N[i]++
		c.bb.R[i] += t.R[h]
		c.bb.NT[i*S+t.S[h+1]]++
	}
	c.bb.Users++
	return nil
}

// Release implements Curator.
func (c *Identity) Release() *Billboard { return c.bb }

func checkShape(S, A, H, K int) error {
	switch {
	case S < 1:
		return fmt.Errorf("S: must be >= 1, got %d", S)
	case A < 1:
		return fmt.Errorf("A: must be >= 1, got %d", A)
	case H < 1:
		return fmt.Errorf("H: must be >= 1, got %d", H)
	case K < 1:
		return fmt.Errorf("K: must be >= 1, got %d", K)
	}
	return nil
}
