package gymenvs

import (
	"strings"
	"testing"
)

// TestEveryEnvLoads: every embedded benchmark loads with the size, horizon and structure its
// description states, and its optimal value beats the uniform policy.
func TestEveryEnvLoads(t *testing.T) {
	want := map[string][4]int{ // S, A, H, terminal states
		"frozenlake4x4":                {16, 4, 100, 5},
		"frozenlake8x8":                {64, 4, 200, 11},
		"cliffwalking":                 {48, 4, 50, 1},
		"taxi":                         {500, 6, 200, 4},
		"cliffwalking-private-support": {48, 4, 50, 1},
		"taxi-private-support":         {500, 6, 200, 4},
	}
	for _, name := range Names() {
		m, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		nt := 0
		for _, x := range m.Terminal {
			if x {
				nt++
			}
		}
		if got := [4]int{m.S, m.A, m.H, nt}; got != want[name] {
			t.Errorf("%s: S, A, H, terminal states = %v, want %v", name, got, want[name])
		}
		if private := strings.HasSuffix(name, "-private-support"); m.PublicSupport == private {
			t.Errorf("%s: public support %v, want %v", name, m.PublicSupport, !private)
		}
		if !m.PublicRewards || !m.Homogeneous() || m.Dense() {
			t.Errorf("%s: public rewards %v, homogeneous %v, dense %v; want public, homogeneous, sparse", name, m.PublicRewards, m.Homogeneous(), m.Dense())
		}
		if v := m.Start(m.Optimal()); !(v > 0) {
			t.Errorf("%s: V* = %g", name, v)
		}
	}
	if _, err := Load("nope"); err == nil {
		t.Fatal("loaded an unknown environment")
	}
}
