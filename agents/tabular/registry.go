package tabular

import (
	"fmt"
	"slices"
	"strings"
)

// Info describes a named agent for listings.
type Info struct {
	// Name is the CLI name, e.g. "dp-ucbvi-jdp".
	Name string
	// Algorithm and Model are what the name selects.
	Algorithm string
	Model     Model
	// Description is one line for `dprl list`.
	Description string
	// Reconstructed marks agents whose details the papers do not give.
	Reconstructed bool
}

// Agents lists the tabular agents.
func Agents() []Info {
	return []Info{
		{"ucbvi", "dp-ucbvi", NonPrivate, "UCBVI, non-private baseline: Alg. 1 of Qiao & Wang with exact counts (Bernstein bonus eq. (31), E = 0)", false},
		{"ucbvi-hoeffding", "private-ucbvi", NonPrivate, "UCBVI with a Hoeffding bonus (the non-private twin of Private-UCB-VI)", true},
		{"dp-ucbvi-jdp", "dp-ucbvi", JDP, "DP-UCBVI + Central privatizer (ε-JDP): Laplace binary-mechanism counts + LP post-processing eq. (4)-(5)", false},
		{"dp-ucbvi-ldp", "dp-ucbvi", LDP, "DP-UCBVI + Local privatizer (ε-LDP): Laplace noise on the user's side + LP post-processing", false},
		{"private-ucbvi-jdp", "private-ucbvi", JDP, "Private-UCB-VI (Chowdhury & Zhou 2021), ε-JDP, Hoeffding bonus on raw noisy counts [RECONSTRUCTED]", true},
		{"private-ucbvi-ldp", "private-ucbvi", LDP, "Private-UCB-VI (Chowdhury & Zhou 2021), ε-LDP, Hoeffding bonus on raw noisy counts [RECONSTRUCTED]", true},
	}
}

// Lookup returns the agent named name.
func Lookup(name string) (Info, error) {
	all := Agents()
	names := entryNames(all, func(a Info) string { return a.Name })
	if i := slices.Index(names, name); i >= 0 {
		return all[i], nil
	}
	practical := entryNames(PracticalAgents(), func(a PracticalInfo) string { return a.Name })
	return Info{}, fmt.Errorf("agent: unknown agent %q%s (allowed: %s; dprl's practical agents: %s)", name,
		didYouMean(name, append(append([]string(nil), names...), practical...)), strings.Join(names, ", "), strings.Join(practical, ", "))
}

// entryNames returns the names of the registry entries, in order.
func entryNames[T any](entries []T, name func(T) string) []string {
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = name(e)
	}
	return names
}

// didYouMean returns `; did you mean "x"?` for the candidate closest to name within an edit
// distance of 2 (ties: the first), or "".
func didYouMean(name string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
