package tabular

import (
	"fmt"
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
	var names []string
	for _, a := range Agents() {
		if a.Name == name {
			return a, nil
		}
		names = append(names, a.Name)
	}
	return Info{}, fmt.Errorf("agent: unknown agent %q (allowed: %s)", name, strings.Join(names, ", "))
}
