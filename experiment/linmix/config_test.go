package linmix

import (
	"context"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/internal/cfgfile/cfgfiletest"
)

func TestDefaultConfig(t *testing.T) {
	c, err := DefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.Episodes != 20000 || len(c.Seeds) != 3 || len(c.Envs) != 2 {
		t.Errorf("embedded config changed: K = %d, %d seeds, %d envs", c.Episodes, len(c.Seeds), len(c.Envs))
	}
	if _, err := c.curves(); err != nil {
		t.Errorf("embedded curves do not build: %v", err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	base := string(DefaultConfigYAML())
	for _, c := range []struct{ from, to, want string }{
		{"episodes: 20000", "episodes: 5", "episodes"},
		{"delta: ", "delta: 2 #", "delta"},
		{"beta_mults:", "bogus: 1\nbeta_mults:", "bogus"},
	} {
		cfgfiletest.Refused(t, parseConfig, base, c.from, c.to, c.want)
	}
}

func TestCheckpoints(t *testing.T) {
	for _, c := range []struct{ K, points int }{{10, 20}, {1000, 40}, {20000, 400}} {
		cp := Checkpoints(c.K, c.points)
		if cp[0] != 1 || cp[len(cp)-1] != c.K {
			t.Errorf("K=%d: checkpoints %d..%d, want 1..K", c.K, cp[0], cp[len(cp)-1])
		}
		for i := 1; i < len(cp); i++ {
			if cp[i] <= cp[i-1] {
				t.Fatalf("K=%d: not strictly increasing at %d", c.K, i)
			}
		}
		if len(cp) > c.points+2 {
			t.Errorf("K=%d: %d checkpoints for %d points", c.K, len(cp), c.points)
		}
	}
}

// TestPracticalConfig: both embedded practical configurations parse, and a tiny run of the
// default one yields the G1 goal verdict for the practical JDP curve at ε = 1.
func TestPracticalConfig(t *testing.T) {
	for _, long := range []bool{false, true} {
		if _, err := PracticalConfig(long); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := PracticalConfig(false)
	c.Episodes, c.Seeds, c.Points = 60, []uint64{1}, 10
	c.Curves = c.Curves[5:6] // practical-vtr jdp
	res, err := Run(context.Background(), c, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := res.Summaries()
	if err != nil {
		t.Fatal(err)
	}
	goals := res.practicalGoals(ss)
	if len(goals) != 1 || goals[0].ID != "G1" || ss[0].Guarantee == nil || !ss[0].Guarantee.PrivateAtNominal {
		t.Fatalf("goals %+v", goals)
	}
	bad := *c
	bad.Curves = []CurveSpec{{Algorithm: PracticalAlgorithm, Mode: "jdp", Epsilons: []float64{1}, Practical: &PracticalSpec{Budget: 2}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "privacy.budget") {
		t.Fatalf("bad budget: %v", err)
	}
}
