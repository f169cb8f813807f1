package linmdp

import (
	"fmt"

	model "github.com/dprl/dprl/model/linmdp"
)

// LSVIUCB is the non-private LSVI-UCB of Jin et al. (2020), as written in [N] Sec. 3
// eqs. (1)–(5): at the start of every episode k, for h = H..1,
//
//	Λ_h = λI + Σ_{i<k} φ_h^i φ_h^iᵀ                         (eq. 1)
//	y_h = Σ_{i<k} φ_h^i (r_h^i + V_{h+1}(s_{h+1}^i))         (eq. 2, aggregated, spec §7)
//	w_h = Λ_h^{-1} y_h                                      (eq. 3)
//	Q_h = clip(φᵀw_h + β‖φ‖_{Λ_h^{-1}}),  V_h = max_a Q_h     (eqs. 4–5; clip to [0,H], P1)
//
// with β = c_beta·d·H·√ln(2dKH/p) (spec §2.2; the absolute constant of [J] is unspecified).
type LSVIUCB struct {
	env     *model.MDP
	cfg     Common
	st      *stats
	pl      *planner
	lam     []float64
	chol    []float64
	y       []float64
	version int
	updates []Update
	beta    float64
	repairs int
	scratch []float64
}

// NewLSVIUCB returns the non-private baseline.
func NewLSVIUCB(env *model.MDP, cfg Common) (*LSVIUCB, error) {
	cfg.defaults()
	if err := cfg.validate(env); err != nil {
		return nil, fmt.Errorf("lsvi-ucb: %w", err)
	}
	d := env.D
	a := &LSVIUCB{env: env, cfg: cfg, st: newStats(env.H, env.N, d),
		lam: make([]float64, d*d), chol: make([]float64, d*d), y: make([]float64, d), scratch: make([]float64, d*d)}
	a.beta = cfg.CBeta * nonPrivateBeta(d, env.H, cfg.K, cfg.P)
	a.pl = newPlanner(env, a.beta, cfg.Tie, cfg.tieRand())
	return a, nil
}

// BeginEpisode refits every step from all data so far.
func (a *LSVIUCB) BeginEpisode(k int) {
	d := a.env.D
	for h := a.env.H - 1; h >= 0; h-- {
		copy(a.lam, a.st.gram[h])
		for i := 0; i < d; i++ {
			a.lam[i*d+i] += a.cfg.Lambda
		}
		if guardPD(a.lam, d, 0, a.chol, a.scratch) {
			a.repairs++
		}
		a.st.target(h, a.pl.valueNext(h), a.y)
		a.pl.planStep(h, Release{Chol: a.chol, Y: a.y})
	}
	a.version++
	a.updates = append(a.updates, Update{Episode: k})
}

// Act implements Agent.
func (a *LSVIUCB) Act(h, s int) int { return a.pl.act[h][s] }

// Observe implements Agent.
func (a *LSVIUCB) Observe(h, s, act int, r float64, s2 int) error {
	_, err := a.st.observe(a.env, h, s, act, r, s2)
	return err
}

// EndEpisode implements Agent.
func (a *LSVIUCB) EndEpisode() {}

// Policy implements Agent.
func (a *LSVIUCB) Policy() [][]int { return a.pl.act }

// PolicyVersion implements Agent.
func (a *LSVIUCB) PolicyVersion() int { return a.version }

// Updates implements Agent.
func (a *LSVIUCB) Updates() []Update { return a.updates }

// Info implements Agent.
func (a *LSVIUCB) Info() Info {
	return Info{Agent: "lsvi-ucb", CBeta: a.cfg.CBeta, Beta: a.beta, Regulariser: a.cfg.Lambda, TieBreak: a.cfg.Tie.String(),
		Repairs: a.repairs, TieFraction: a.pl.tieFraction(), Constants: map[string]any{"lambda": a.cfg.Lambda, "p": a.cfg.P, "K": a.cfg.K}}
}
