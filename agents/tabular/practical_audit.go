package tabular

import (
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// Practical audit setting: RiverSwim with H = 1, one release per user (M = 1) and K = 33 users:
// the changed user 1 enters all 32 releases read by users 2..33, which makes a counter whose
// noise is redrawn per release (instead of correlated) visibly leakier. The claim is the
// agent's own (ε = 1, δ = 10⁻³), computed by the accountant. The changed user is hostile: on
// D′ she reports a reward of 10 at the right bank (clipped to 1 by a correct agent).
const (
	practicalAuditK      = 33
	practicalAuditDelta  = 1e-3
	practicalAuditReward = 10 // the hostile reward of D′
)

// PracticalAuditTargets returns the audit targets of dprl's practical agents: practical-jdp,
// practical-psrl-jdp and practical-ldp at (1, 10⁻³), and deliberately broken variants reachable
// only from here:
//
//   - noise-div4: the counter's / report's σ divided by 4 (built for 4μ, claiming μ);
//   - redrawn: the JDP counter replaced by independent noise of the same marginal std drawn
//     afresh at every release (the naive "marginal noise" prototype of spec §1);
//   - no-clip: rewards enter the statistics unclipped;
//   - raw-planner (JDP): the planner reads exact counts.
//
// JDP output: the release coordinates in which the neighbours differ, for users 2..K, plus
// their policies. LDP output: the changed user's
// report.
func PracticalAuditTargets() []audit.Target {
	var ts []audit.Target
	for _, name := range []string{"practical-jdp", "practical-psrl-jdp"} {
		kinds := []string{"ok", "noise-div4", "redrawn", "no-clip", "raw-planner"}
		if name == "practical-psrl-jdp" {
			kinds = []string{"ok", "noise-div4"}
		}
		for _, kind := range kinds {
			suffix := ""
			if kind != "ok" {
				suffix = "/" + kind
			}
			ts = append(ts, jdpTarget(audit.Target{
				Name: "tabular/" + name + suffix, Family: "tabular", Broken: kind != "ok",
				Claim:       audit.Claim{Epsilon: 1, Delta: practicalAuditDelta},
				Description: "RiverSwim H=1, K=33, one release per user, (1, 1e-3): user 1 at the left bank vs the right bank with a hostile reward 10; the differing release coordinates + policies of users 2..33",
			}, name, kind, practicalAuditJDP, practicalCanaryJDP))
		}
	}
	for _, kind := range []string{"ok", "noise-div4", "no-clip"} {
		kind := kind
		suffix := ""
		if kind != "ok" {
			suffix = "/" + kind
		}
		ts = append(ts, audit.Target{
			Name: "tabular/practical-ldp" + suffix, Family: "tabular", Broken: kind != "ok",
			Claim:       audit.Claim{Epsilon: 1, Delta: practicalAuditDelta},
			Description: "RiverSwim H=1, (1, 1e-3): the changed user's Gaussian report, left bank vs right bank with a hostile reward 10",
			Run: func(side int, seed rng.Seed) ([]float64, error) {
				z, err := practicalAuditRandomizer(kind, seed)
				if err != nil {
					return nil, err
				}
				rep, err := z.Randomize(auditTrajectories(practicalAuditReward)[side])
				if err != nil {
					return nil, err
				}
				return rep.Values(), nil
			},
			Canaries: 1000,
			Canary: func(include []bool, seed rng.Seed) ([]float64, error) {
				z, err := practicalAuditRandomizer(kind, seed)
				if err != nil {
					return nil, err
				}
				return canaryScores(auditTrajectories(practicalAuditReward), include, func(tr *model.Trajectory) (float64, error) {
					rep, err := z.Randomize(tr)
					if err != nil {
						return 0, err
					}
					return practicalEvidence(rep.x), nil
				})
			},
		})
	}
	return ts
}

// practicalEvidence sums the pooled statistics (S = 6, A = 2) in which the two audit
// trajectories differ, signed towards D′.
func practicalEvidence(x []float64) float64 {
	const S, A = 6, 2
	left, right := 0*A+0, 5*A+1
	nt := S * A * S
	return x[right*S+5] - x[left*S+0] + x[nt+right] - x[nt+left]
}

func practicalAuditPrivacy(model Model, kind string) (PracticalPrivacy, error) {
	// The audits use the exact square-root factorisation ("sqrt"), of which the default BLT
	// counter is a fitted approximation: fitting a BLT per run would dominate the audit's
	// cost. The BLT counter itself is audited as a mechanism by privacy/counter's targets.
	p := PracticalPrivacy{Model: model, Epsilon: 1, Delta: practicalAuditDelta, Pool: true, VisitCap: DefaultVisitCap, BatchEvery: 1, Counter: "sqrt", RewardWeight: DefaultRewardWeight}
	if kind == "noise-div4" { // BROKEN: built for 4μ while claiming μ
		g, err := accounting.GDPFor(accounting.ApproxDP{Epsilon: 1, Delta: practicalAuditDelta})
		if err != nil {
			return p, err
		}
		a, err := accounting.GDP{Mu: 4 * g.Mu}.ToApproxDP(practicalAuditDelta)
		if err != nil {
			return p, err
		}
		p.Epsilon = a.Epsilon
	}
	return p, nil
}

func practicalAuditRandomizer(kind string, seed rng.Seed) (*GaussianRandomizer, error) {
	p, err := practicalAuditPrivacy(LDP, kind)
	if err != nil {
		return nil, err
	}
	z, _, _, err := newPracticalLocal(6, 2, 1, 2, p, nil, noise.NewSeeded(seed.Child("noise").Rand()))
	if err != nil {
		return nil, err
	}
	z.enc.noClip = kind == "no-clip"
	return z, nil
}

// redrawnCounter is the BROKEN "noise redrawn per release" counter: exact prefix plus fresh
// independent noise of the correct counter's marginal std at every release.
type redrawnCounter struct {
	counter.GaussianCounter
	src         noise.Source
	sum, prefix []float64
	t           int
	stdAt       func(int) float64
}

func (r *redrawnCounter) Insert(x []float64) error {
	if err := r.GaussianCounter.Insert(x); err != nil {
		return err
	}
	r.t++
	for i, v := range x {
		r.sum[i] += v
	}
	s := r.stdAt(r.t)
	for i, v := range r.sum {
		r.prefix[i] = r.src.AddGaussian(v, s)
	}
	return nil
}
func (r *redrawnCounter) Prefix() []float64 { return r.prefix }

// practicalAuditServer builds the JDP server of one audit variant for K users.
func practicalAuditServer(name, kind string, K int, seed rng.Seed) (PracticalServer, error) {
	p, err := practicalAuditPrivacy(JDP, kind)
	if err != nil {
		return nil, err
	}
	cfg, err := DefaultPracticalConfig(name, 1, practicalAuditDelta)
	if err != nil {
		return nil, err
	}
	cfg.Privacy = p
	st := PracticalStreams{Tie: seed.Child("tie").Rand(), Posterior: seed.Child("post").Rand(), Noise: noise.NewSeeded(seed.Child("noise").Rand())}
	if kind == "raw-planner" {
		cfg.Privacy.Model = NonPrivate // BROKEN: the planner reads exact counts
	}
	ag, err := NewPractical(6, 2, 1, K, cfg, st)
	if err != nil {
		return nil, err
	}
	cs := ag.Server.(*practicalCuratorServer)
	cur := cs.cur.(*PracticalCentral)
	cur.enc.noClip = kind == "no-clip"
	if kind == "redrawn" {
		g := cur.cnt
		cur.cnt = &redrawnCounter{GaussianCounter: g, src: noise.NewSeeded(seed.Child("redraw").Rand()),
			sum: make([]float64, g.Dim()), prefix: make([]float64, g.Dim()), stdAt: g.StdAt}
	}
	return cs, nil
}

// practicalAuditJDP runs K users with user 1 changed and returns what users 2..K are given.
func practicalAuditJDP(name, kind string, side int, seed rng.Seed) ([]float64, error) {
	srv, err := practicalAuditServer(name, kind, practicalAuditK, seed)
	if err != nil {
		return nil, err
	}
	return observeChanged(srv, 1, practicalAuditK, auditTrajectories(practicalAuditReward)[side], func(out []float64, pol *model.Policy) []float64 {
		// The coordinates in which D and D′ differ (observing a subset of the releases is a
		// post-processing: an event on it is an event on the whole output).
		r := srv.Release()
		const S, A = 6, 2
		left, right := 0*A+0, 5*A+1
		out = append(out, r.NT[left*S+0], r.NT[right*S+5], r.R[left], r.R[right])
		for _, a := range pol.Act[0] {
			out = append(out, float64(a))
		}
		return out
	})
}

// practicalCanaryJDP: users 1..m are the canaries (right bank with reward 10 if included, left
// bank otherwise); canary i's score is the increase of the released right-bank evidence across
// her release.
func practicalCanaryJDP(name, kind string, include []bool, seed rng.Seed) ([]float64, error) {
	m := len(include)
	srv, err := practicalAuditServer(name, kind, m+1, seed)
	if err != nil {
		return nil, err
	}
	return canaryReleases(srv, auditTrajectories(practicalAuditReward), include, func() float64 {
		r := srv.Release()
		return practicalEvidence(append(append([]float64(nil), r.NT...), r.R...))
	})
}
