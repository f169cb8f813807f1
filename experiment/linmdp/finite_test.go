package linmdp

import (
	"strings"
	"testing"
)

// TestTinyEpsilonRefusedByValidate: an ε so small that a private agent's noise scale
// overflows is refused by ParseSuite/Validate (before any compute; the run used to fail when
// it reached the cell), with an error naming the agent and ε.
func TestTinyEpsilonRefusedByValidate(t *testing.T) {
	for _, agents := range []string{"[ngo]", "[luyo-batched]", "[luyo-zcdp]", "[ngo-printed]"} {
		doc := strings.Replace(strings.Replace(smallConfig, "epsilons: [10, 100]", "epsilons: [10, 1e-320]", 1),
			"agents: [lsvi-ucb, rare-switch, ngo, ngo-printed, rare-switch-reg, luyo-batched, luyo-zcdp, batch-twin, luyo-nonbatched]", "agents: "+agents, 1)
		_, err := ParseSuite([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), "1e-320") || !strings.Contains(err.Error(), "epsilon") {
			t.Errorf("%s: %v, want an error naming epsilon = 1e-320", agents, err)
		}
	}
}
