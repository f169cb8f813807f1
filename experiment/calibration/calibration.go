// Package calibration is dprl's one vocabulary of noise-calibration names, used by every
// family in its configurations, flags, curve labels, CSV files and manifests (issue 10,
// "consistent calibration names"):
//
//	paper    the paper's own noise scales, as printed (or as the spec fixes them where the
//	         printed formula is a typo); not always private at the nominal ε under replace-one
//	         neighbours: every output states the effective ε (tabular Paper: ε under zero-out,
//	         2ε under replace-one, tabular spec §8.3; LQ: the paper's σ² ≈ 8mΔ²ln(2/δ)/ε², lq
//	         spec §5; linear mixture: Luyo et al. Cor. 5/6, covered for ε < 1 only, spec P7;
//	         linear MDP: Ngo's printed [P] constants, agent ngo-printed, and Luyo et al.'s
//	         App. E.1, agents luyo-batched and luyo-nonbatched)
//	exact    the same mechanism with the scale the accountant computes so that the nominal ε
//	         (and δ) hold exactly under replace-one neighbours (tabular: 6HL/ε and 6H/ε, spec
//	         §8.3; LQ: the exact ρ*; linear MDP: Ngo's constants as corrected by the spec, [S],
//	         agent ngo)
//	zcdp     Gaussian noise calibrated through zero-concentrated DP, ρ* = (√(ln(1/δ)+ε) −
//	         √ln(1/δ))², valid for every ε > 0 (linear-mixture spec P7; linear-MDP spec §4.6,
//	         agent luyo-zcdp); not in the papers
//	laplace  a pure ε-DP Laplace variant with derived constants (linear-mixture spec §3.5)
//	unit     noise scale 1/ε, for reproducing published figures only; NOT ε-private (tabular
//	         spec §7.5); every output states the effective ε
//
// Old names are accepted as aliases where users may have scripts: "strict" (the tabular
// family's name for exact before this vocabulary) reads as exact. Outputs always carry the
// canonical name.
package calibration

import (
	"fmt"
	"strings"
)

// The canonical calibration names.
const (
	Paper   = "paper"
	Exact   = "exact"
	ZCDP    = "zcdp"
	Laplace = "laplace"
	Unit    = "unit"
)

// Names returns every canonical name, in the order of the package documentation.
func Names() []string { return []string{Paper, Exact, ZCDP, Laplace, Unit} }

// Alias returns the canonical name an old name stands for (ok = false if name is not an
// alias). "strict" is the tabular family's former name of exact.
func Alias(name string) (canonical string, ok bool) {
	if name == "strict" {
		return Exact, true
	}
	return "", false
}

// Canonical returns the canonical name of name (itself, or what an alias stands for) if it is
// one of allowed; otherwise an error naming field and the allowed names (with the aliases).
func Canonical(field, name string, allowed ...string) (string, error) {
	c := name
	if a, ok := Alias(name); ok {
		c = a
	}
	for _, n := range allowed {
		if c == n {
			return c, nil
		}
	}
	return "", fmt.Errorf("%s: unknown calibration %q (allowed: %s)", field, name, Allowed(allowed...))
}

// Allowed formats allowed names for an error or a help text, with the aliases that map to them
// ("exact (alias strict), paper, unit").
func Allowed(allowed ...string) string {
	parts := make([]string, len(allowed))
	for i, n := range allowed {
		parts[i] = n
		if n == Exact {
			parts[i] += " (alias strict)"
		}
	}
	return strings.Join(parts, ", ")
}

// Describe returns the one-line meaning of a canonical name (for `dprl list`), or "".
func Describe(name string) string {
	switch name {
	case Paper:
		return "the paper's own noise scales as printed; may not be private at the nominal ε under replace-one (the effective ε is stated)"
	case Exact:
		return "the same mechanism with the accountant's exact scale: private at the nominal ε (δ) under replace-one"
	case ZCDP:
		return "Gaussian noise calibrated through zCDP, valid for every ε > 0 (not in the papers)"
	case Laplace:
		return "pure ε-DP Laplace variant with derived constants (linear-mixture spec §3.5)"
	case Unit:
		return "scale 1/ε, reproduction of published figures only: NOT ε-private (the effective ε is stated)"
	}
	return ""
}
