package tabular

import (
	"fmt"
	"math"
	"math/rand/v2"

	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// Audit setting: RiverSwim with H = 1 and K = 3 users, so that the changed user 1 enters both
// levels of the JDP trees (capacity K−1 = 2, L = 2) and both releases that contain her (the
// billboards read for users 2 and 3) are observed. The other users are fixed response trees
// (the same user streams in every run): only the agent's randomness varies, as DP requires.
const (
	auditH       = 1
	auditK       = 3
	auditEpsilon = 1.0
	auditUsers   = 0xA0D17 // seed of the fixed user streams
)

// auditTrajectories are the changed user's two possible trajectories on RiverSwim (S = 6):
// D stays at the left bank with no reward, D′ is at the rarely visited right bank, swims
// right and reports the reward r (1; the practical audits' hostile user reports 10) — they
// differ in every statistic the privatizers count.
func auditTrajectories(r float64) [2]*model.Trajectory {
	return [2]*model.Trajectory{
		{S: []int{0, 0}, A: []int{0}, R: []float64{0}},
		{S: []int{5, 5}, A: []int{1}, R: []float64{r}},
	}
}

// AuditTargets returns the tabular family's audit targets: DP-UCBVI and Private-UCB-VI under
// JDP and LDP at ε = 1 with the exact calibration (ε-DP under replace-one neighbours), and
// deliberately broken variants reachable only from here:
//
//   - noise-div4: every Laplace scale divided by 4 (the agent built at 4ε, claiming ε);
//   - scale-from-data: the noise scale computed from the first user's rewards;
//   - raw-planner (JDP): the planner reads the exact counts instead of the released ones.
//
// JDP output: the billboard each later user's planner reads plus the actions of the policy
// handed to that user. LDP output: the changed user's privatized report.
func AuditTargets() []audit.Target {
	var ts []audit.Target
	for _, alg := range []string{"dp-ucbvi", "private-ucbvi"} {
		for _, v := range []struct{ suffix, kind string }{{"", "ok"}, {"/noise-div4", "div4"}, {"/scale-from-data", "data"}, {"/raw-planner", "raw"}} {
			ts = append(ts, jdpTarget(audit.Target{
				Name: "tabular/" + alg + "-jdp" + v.suffix, Family: "tabular", Broken: v.kind != "ok",
				Claim:       audit.Claim{Epsilon: auditEpsilon},
				Description: "RiverSwim H=1, K=3, exact calibration ε=1: user 1 at the left bank (no reward) vs the right bank (rewarded); billboards + policies of users 2, 3",
			}, alg, v.kind, auditJDP, canaryJDP))
		}
		for _, v := range []struct{ suffix, kind string }{{"", "ok"}, {"/noise-div4", "div4"}, {"/scale-from-data", "data"}} {
			kind := v.kind
			ts = append(ts, audit.Target{
				Name: "tabular/" + alg + "-ldp" + v.suffix, Family: "tabular", Broken: kind != "ok",
				Claim:       audit.Claim{Epsilon: auditEpsilon},
				Description: "RiverSwim H=1, exact calibration ε=1: the changed user's privatized report, left bank vs right bank",
				Run: func(side int, seed rng.Seed) ([]float64, error) {
					tr := auditTrajectories(1)[side]
					rep, err := auditRandomizer(kind, tr, seed.Child("noise").Rand()).Randomize(tr)
					if err != nil {
						return nil, err
					}
					n, nt, r := rep.Values()
					return append(append(n, nt...), r...), nil
				},
				Canaries: 1000,
				Canary: func(include []bool, seed rng.Seed) ([]float64, error) {
					// Each canary is one user whose report is released; the score is the
					// report's evidence for the right-bank trajectory.
					src := seed.Child("noise").Rand()
					return canaryScores(auditTrajectories(1), include, func(tr *model.Trajectory) (float64, error) {
						rep, err := auditRandomizer(kind, tr, src).Randomize(tr)
						if err != nil {
							return 0, err
						}
						return rightBankEvidence(rep.Values()), nil
					})
				},
			})
		}
	}
	return ts
}

// rightBankEvidence sums the statistics in which the two audit trajectories differ, signed
// towards D′ (S = 6, A = 2, H = 1).
func rightBankEvidence(n, nt, r []float64) float64 {
	const S, A = 6, 2
	left, right := 0*A+0, 5*A+1
	return n[right] - n[left] + nt[right*S+5] - nt[left*S+0] + r[right] - r[left]
}

// jdpTarget completes the audit target t of the variant kind of the JDP agent alg: run is its
// output for side D or D′ and canary the scores of its 500 canaries.
func jdpTarget(t audit.Target, alg, kind string, run func(alg, kind string, side int, seed rng.Seed) ([]float64, error),
	canary func(alg, kind string, include []bool, seed rng.Seed) ([]float64, error)) audit.Target {
	t.Run = func(side int, seed rng.Seed) ([]float64, error) { return run(alg, kind, side, seed) }
	t.Canaries = 500
	t.Canary = func(include []bool, seed rng.Seed) ([]float64, error) { return canary(alg, kind, include, seed) }
	return t
}

// canaryScores scores canary i, who plays trs[1] if include[i] and trs[0] otherwise, by
// score(her trajectory), in order.
func canaryScores(trs [2]*model.Trajectory, include []bool, score func(*model.Trajectory) (float64, error)) ([]float64, error) {
	scores := make([]float64, len(include))
	for i, in := range include {
		tr := trs[0]
		if in {
			tr = trs[1]
		}
		s, err := score(tr)
		if err != nil {
			return nil, err
		}
		scores[i] = s
	}
	return scores, nil
}

// auditRandomizer returns the user-side randomiser of the LDP audit target for one variant.
func auditRandomizer(kind string, tr *model.Trajectory, r *rand.Rand) *Randomizer {
	priv := PrivacyConfig{Model: LDP, Epsilon: auditEpsilon, Calibration: Strict, Beta: 0.1, EMode: EPractical, EScale: 1}
	b, _ := priv.scale(auditH, auditK, false)
	switch kind {
	case "div4":
		b /= 4
	case "data":
		b *= math.Max(0.01, tr.R[0]) // BROKEN: the scale reads the user's reward
	}
	return NewRandomizer(6, 2, auditH, b, noise.NewSeeded(r))
}

// auditServer builds the JDP server of one audit variant for K users.
func auditServer(alg, kind string, K int, first *model.Trajectory, seed rng.Seed) (Server, error) {
	m, err := model.RiverSwim(auditH)
	if err != nil {
		return nil, err
	}
	priv := PrivacyConfig{Model: JDP, Epsilon: auditEpsilon, Calibration: Strict, Beta: 0.1, EMode: EPractical, EScale: 1}
	switch kind {
	case "div4":
		priv.Epsilon *= 4 // BROKEN: noise scales of 4ε while claiming ε
	case "data":
		priv.Epsilon /= math.Max(0.01, first.R[0]) // BROKEN: the scale reads user 1's reward
	}
	preset, err := BonusPreset("practical", alg == "private-ucbvi")
	if err != nil {
		return nil, err
	}
	bonus, err := preset.Resolve(m.S, m.A, auditH, K, priv.Beta)
	if err != nil {
		return nil, err
	}
	tie := seed.Child("tie").Rand()
	var planner Planner
	if alg == "dp-ucbvi" {
		planner = NewDPUCBVI(m.S, m.A, auditH, bonus, tie)
	} else {
		planner = NewPrivateUCBVI(m.S, m.A, auditH, bonus, tie)
	}
	var cur Curator
	if kind == "raw" {
		cur, err = NewIdentity(m.S, m.A, auditH) // BROKEN: the planner reads exact counts
	} else {
		src := func(name string) noise.Source { return noise.NewSeeded(seed.Child(name).Rand()) }
		cur, err = NewCentral(m.S, m.A, auditH, K, priv, src)
	}
	if err != nil {
		return nil, err
	}
	return newCuratorServer(cur, planner, model.NewDeterministic(m.S, auditH)), nil
}

// auditJDP runs K = 3 users with user 1 changed and returns what users 2 and 3 are given.
func auditJDP(alg, kind string, side int, seed rng.Seed) ([]float64, error) {
	first := auditTrajectories(1)[side]
	srv, err := auditServer(alg, kind, auditK, first, seed)
	if err != nil {
		return nil, err
	}
	return observeChanged(srv, auditH, auditK, first, func(out []float64, pol *model.Policy) []float64 {
		b := srv.Billboard()
		out = append(out, b.N...)
		out = append(out, b.NT...)
		out = append(out, b.R...)
		for _, row := range pol.Act {
			for _, a := range row {
				out = append(out, float64(a))
			}
		}
		return out
	})
}

// auditedServer is what the JDP audits drive: a Server or a PracticalServer.
type auditedServer interface {
	Policy() (*model.Policy, error)
	Receive(m Message) error
}

// observeChanged runs K users on RiverSwim with horizon H: user 1 plays first, users 2..K-1
// the fixed response trees of auditUsers. It returns what observe appends, for each user
// k = 2..K, to the output given her policy pol (and the server's current release).
func observeChanged(srv auditedServer, H, K int, first *model.Trajectory, observe func(out []float64, pol *model.Policy) []float64) ([]float64, error) {
	m, err := model.RiverSwim(H)
	if err != nil {
		return nil, err
	}
	users := rng.NewSeed(auditUsers)
	tr := model.NewTrajectory(H)
	var out []float64
	for k := 1; k <= K; k++ {
		pol, err := srv.Policy()
		if err != nil {
			return nil, err
		}
		if k > 1 {
			out = observe(out, pol)
		}
		if k == K {
			break
		}
		u := first
		if k > 1 {
			m.Rollout(pol, users.Index(uint64(k)).Rand(), tr)
			u = tr
		}
		if err := srv.Receive(RawTrajectory{T: u}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// canaryJDP runs one JDP agent over len(include)+1 users, user i+1 being canary i (right bank
// if included, left bank otherwise), and scores canary i by the increase of the released
// right-bank evidence between the billboard before and after her episode.
func canaryJDP(alg, kind string, include []bool, seed rng.Seed) ([]float64, error) {
	m := len(include)
	trs := auditTrajectories(1)
	first := trs[0]
	if include[0] {
		first = trs[1]
	}
	srv, err := auditServer(alg, kind, m+1, first, seed)
	if err != nil {
		return nil, err
	}
	return canaryReleases(srv, trs, include, func() float64 {
		b := srv.Billboard()
		return rightBankEvidence(b.N, b.NT, b.R)
	})
}

// canaryReleases runs len(include) canaries through srv, canary i playing trs[1] if
// include[i] and trs[0] otherwise, and scores her by the increase of the released evidence
// (read after each policy computation) between the release before and after her episode.
func canaryReleases(srv auditedServer, trs [2]*model.Trajectory, include []bool, evidence func() float64) ([]float64, error) {
	m := len(include)
	scores := make([]float64, m)
	prev := 0.0
	for i := 0; i <= m; i++ {
		if _, err := srv.Policy(); err != nil {
			return nil, err
		}
		ev := evidence()
		if i > 0 {
			scores[i-1] = ev - prev
		}
		prev = ev
		if i == m {
			break
		}
		tr := trs[0]
		if include[i] {
			tr = trs[1]
		}
		if err := srv.Receive(RawTrajectory{T: tr}); err != nil {
			return nil, fmt.Errorf("canary %d: %w", i, err)
		}
	}
	return scores, nil
}
