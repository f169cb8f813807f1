package enginetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/rundir/rundirtest"
)

// CheckTheory checks the papers' regret exponent that the manifest of run directory dir
// records for every curve of the agents in want (curves[].extras.<family>.growth_exponent_theory,
// what ARCHITECTURE.md's "A new agent" recipe reads from the agent's table row): want[agent]
// is the exponent, or 0 for none, written as null with an undefined reason starting "none".
// Every agent of want must have a curve; it returns the number of curves of each.
func CheckTheory(t *testing.T, dir, family string, want map[string]float64) map[string]int {
	t.Helper()
	var man struct {
		Curves []struct {
			Agent  string                     `json:"agent"`
			Extras map[string]json.RawMessage `json:"extras"`
		} `json:"curves"`
	}
	rundirtest.DecodeManifest(t, dir, &man)
	seen := map[string]int{}
	for _, c := range man.Curves {
		w, ok := want[c.Agent]
		if !ok {
			continue
		}
		seen[c.Agent]++
		var x struct {
			Theory    *float64          `json:"growth_exponent_theory"`
			Undefined map[string]string `json:"undefined"`
		}
		if err := json.Unmarshal(c.Extras[family], &x); err != nil {
			t.Fatalf("%s's extras.%s: %v", c.Agent, family, err)
		}
		got := "null"
		if x.Theory != nil {
			got = fmt.Sprint(*x.Theory)
		}
		switch {
		case w == 0 && (x.Theory != nil || !strings.HasPrefix(x.Undefined["growth_exponent_theory"], "none")):
			t.Errorf("%s's missing theory exponent written as %s (undefined %v), want null and \"none\"", c.Agent, got, x.Undefined)
		case w != 0 && (x.Theory == nil || *x.Theory != w):
			t.Errorf("%s's theory exponent %s, want %g", c.Agent, got, w)
		}
	}
	for agent := range want {
		if seen[agent] == 0 {
			t.Errorf("no curve of %s in the manifest", agent)
		}
	}
	return seen
}
