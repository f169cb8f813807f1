package tabular

import (
	"fmt"
	"math"
)

// C3 formulas: how the coefficient of the privacy term E/n is resolved.
const (
	// C3Const uses C3 as given.
	C3Const = "const"
	// C3HSIota multiplies C3 by H·S·ι (DP-UCBVI theory: 20·H·S·ι, eq. (31)).
	C3HSIota = "H*S*iota"
	// C3Hoeffding multiplies C3 by (2 + 2H + S·H) (Private-UCB-VI reconstruction).
	C3Hoeffding = "2+2H+S*H"
)

// BonusConfig is the exploration bonus of an agent (tabular spec §2.6):
//
//	bonus = Multiplier · ( Scale·(C1·√(var·ι/n) + C2·√(ι/n) + C4·term4) + C3eff·E/n )
//
// for DP-UCBVI (term4 = 4√ι·√(Σ P̃(s')·g(Ñ_{h+1}(s'))/n), g with the constant CorrConst), and
//
//	bonus = Multiplier · ( Scale·C2·(H+1)·√(ι/n⁺) + C3eff·E/n⁺ )
//
// for Private-UCB-VI. Every run records the resolved config.
type BonusConfig struct {
	// Preset is the name of the preset the config started from ("theory", "practical").
	Preset string `json:"preset"`
	// Iota is ι; 0 means the paper's ι = ln(30·H·S·A·K·H/β) (Alg. 1 line 2).
	Iota float64 `json:"iota"`
	// C1 multiplies the Bernstein term √(var·ι/n) (theory 2).
	C1 float64 `json:"c1"`
	// C2 multiplies √(ι/n) (theory √2).
	C2 float64 `json:"c2"`
	// C3 multiplies E/n after resolution by C3Formula (theory 20 with C3HSIota).
	C3        float64 `json:"c3"`
	C3Formula string  `json:"c3_formula"`
	// C4 multiplies term4 (theory 1; practical 0: it is saturated, spec pitfall 2).
	C4 float64 `json:"c4"`
	// CorrConst is the 1000 inside g (theory 1000).
	CorrConst float64 `json:"corr_const"`
	// Scale multiplies the statistical terms (theory 1, practical 0.1).
	Scale float64 `json:"scale"`
	// Multiplier multiplies the whole bonus (default 1). It never touches noise levels.
	Multiplier float64 `json:"multiplier"`
	// MinPrev takes Q̃^k = min(Q̃^{k−1}, …) as Alg. 1 line 9 does.
	MinPrev bool `json:"min_prev"`
	// OptimisticMass (Private-UCB-VI only) values the missing mass (1 − Σ_{s'} P̃(s'))₊ of the
	// sub-stochastic noisy estimate at H. [DECISION] Without it, a pair with no data has P̃ ≈ 0,
	// so Q̃ ≈ bonus: with any Scale < 1 that is pessimistic, and MinPrev makes it permanent.
	OptimisticMass bool `json:"optimistic_mass"`
	// TieTol: actions with Q̃ ≥ max − TieTol are tied; ties are broken uniformly at random by
	// the agent's seeded tie stream, once per (h, s) per episode (spec §2.7).
	TieTol float64 `json:"tie_tol"`
}

// TheoryBonus is the paper's bonus, eq. (31), for DP-UCBVI.
func TheoryBonus() BonusConfig {
	return BonusConfig{Preset: "theory", C1: 2, C2: math.Sqrt2, C3: 20, C3Formula: C3HSIota, C4: 1,
		CorrConst: 1000, Scale: 1, Multiplier: 1, MinPrev: true, TieTol: 1e-9}
}

// PracticalBonus is the spec's practical preset (§2.6, calibrated on RiverSwim; not from the
// paper): Scale 0.1, term4 dropped, C3 = 5.
func PracticalBonus() BonusConfig {
	return BonusConfig{Preset: "practical", C1: 2, C2: math.Sqrt2, C3: 5, C3Formula: C3Const, C4: 0,
		CorrConst: 1000, Scale: 0.1, Multiplier: 1, MinPrev: true, TieTol: 1e-9}
}

// HoeffdingTheoryBonus is the reconstructed Private-UCB-VI theory bonus:
// (H+1)·√(2ι/n⁺) + (2 + 2H + S·H)·E/n⁺ [RECONSTRUCTED, see privateucbvi.go].
func HoeffdingTheoryBonus() BonusConfig {
	b := TheoryBonus()
	b.C1, b.C4, b.C3, b.C3Formula = 0, 0, 1, C3Hoeffding
	return b
}

// HoeffdingPracticalBonus is the practical counterpart for Private-UCB-VI [DECISION]: C3 = 5 as
// for DP-UCBVI, and Scale = 0.02 so that its Hoeffding term 0.02·√2·(H+1)·√(ι/n) (≈ 0.59·√(ι/n)
// at H = 20) is of the same size as the practical Bernstein term 0.1·2·√(var·ι/n) at a typical
// next-state value spread (sd ≈ H/7); Scale 0.1 makes it explore ≈ 5× longer than DP-UCBVI.
func HoeffdingPracticalBonus() BonusConfig {
	b := PracticalBonus()
	b.C1, b.Scale, b.OptimisticMass = 0, 0.02, true
	return b
}

// BonusPreset returns the named preset for an algorithm family: hoeffding selects the
// Private-UCB-VI variants.
func BonusPreset(name string, hoeffding bool) (BonusConfig, error) {
	switch {
	case name == "theory" && !hoeffding:
		return TheoryBonus(), nil
	case name == "practical" && !hoeffding:
		return PracticalBonus(), nil
	case name == "theory":
		return HoeffdingTheoryBonus(), nil
	case name == "practical":
		return HoeffdingPracticalBonus(), nil
	}
	return BonusConfig{}, fmt.Errorf("bonus.preset: unknown preset %q (allowed: theory, practical)", name)
}

// Validate checks every field.
func (c BonusConfig) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"iota", c.Iota}, {"c1", c.C1}, {"c2", c.C2}, {"c3", c.C3}, {"c4", c.C4}, {"corr_const", c.CorrConst},
		{"scale", c.Scale}, {"multiplier", c.Multiplier}, {"tie_tol", c.TieTol}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("bonus.%s: must be finite and >= 0, got %g", f.name, f.v)
		}
	}
	switch c.C3Formula {
	case C3Const, C3HSIota, C3Hoeffding:
	default:
		return fmt.Errorf("bonus.c3_formula: unknown formula %q (allowed: %s, %s, %s)", c.C3Formula, C3Const, C3HSIota, C3Hoeffding)
	}
	return nil
}

// Resolve fills ι (if 0) and turns C3 into the final coefficient, for an (S, A, H) MDP, K
// episodes and failure probability β.
func (c BonusConfig) Resolve(S, A, H, K int, beta float64) (BonusConfig, error) {
	if err := c.Validate(); err != nil {
		return c, err
	}
	if c.Iota == 0 {
		c.Iota = math.Log(30 * float64(H) * float64(S) * float64(A) * float64(K) * float64(H) / beta)
	}
	switch c.C3Formula {
	case C3HSIota:
		c.C3 *= float64(H) * float64(S) * c.Iota
	case C3Hoeffding:
		c.C3 *= 2 + 2*float64(H) + float64(S*H)
	}
	c.C3Formula = C3Const
	return c, nil
}
