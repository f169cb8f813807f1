package linmdp

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/engine/enginetest"
	"github.com/dprl/dprl/experiment/internal/cfgfile/cfgfiletest"
)

const smallConfig = `
name: small
episodes: 300
seeds: [1, 2]
delta: 1.0e-5
p: 0.05
checkpoints: 10
tie_break: bonus
epsilons: [10, 100]
agents: [lsvi-ucb, rare-switch, ngo, ngo-printed, rare-switch-reg, luyo-batched, luyo-zcdp, batch-twin, luyo-nonbatched]
envs:
  - {name: E2s, kind: latentriver, m: 3, copies: 10, horizon: 6}
beta_modes:
  - {name: theory, c_beta: 1}
  - {name: tuned, match_c_beta: 0.2}
`

func TestDefaultConfigValid(t *testing.T) {
	s, err := DefaultSuite()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Blocks) != 2 || len(s.Blocks[0].Cells()) == 0 {
		t.Fatal("default suite must have the main and long blocks")
	}
	one, err := ParseSuite([]byte(smallConfig))
	if err != nil || len(one.Blocks) != 1 {
		t.Fatalf("single config as suite: %v", err)
	}
}

// TestRunDeterministicAcrossWorkers: the same configuration gives identical results with 1
// and 3 workers, and Write produces every file with the manifest last.
func TestRunDeterministicAcrossWorkers(t *testing.T) {
	cfg, err := ParseConfig([]byte(smallConfig))
	if err != nil {
		t.Fatal(err)
	}
	rs := enginetest.RunWorkers(t, func(w int) (*Result, error) { return Run(context.Background(), cfg, Options{Workers: w}) }, 1, 3)
	r1, r3 := rs[0], rs[1]
	if !reflect.DeepEqual(r1.Cells, r3.Cells) {
		t.Fatal("results differ between 1 and 3 workers")
	}
	dir := t.TempDir()
	man, summary, err := r1.Write(dir, []string{"test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(man.Figures, "manifest.json", "summary.md") {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	if !strings.Contains(summary, "privacy cost") && !strings.Contains(summary, "Privacy cost") {
		t.Error("summary lacks the privacy-cost table")
	}
	// The tuned mode gives every agent the same β.
	var betas []float64
	for _, c := range man.Curves {
		s := c.Extras["linmdp"].(CellSummary)
		if s.Cell.Beta == "tuned" {
			betas = append(betas, s.Beta)
		}
	}
	for _, b := range betas {
		if rel := (b - betas[0]) / betas[0]; rel > 1e-9 || rel < -1e-9 {
			t.Fatalf("tuned betas differ: %v", betas)
		}
	}
}

func TestConfigBadInput(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"episodes: 300", "episodes: 3", "episodes"},
		{"delta: 1.0e-5", "delta: 2", "delta"},
		{"epsilons: [10, 100]", "epsilons: [-1]", "epsilons"},
		{"tie_break: bonus", "tie_break: coin", "tie_break"},
		{"kind: latentriver", "kind: nope", "kind"},
		{"m: 3,", "m: 1,", "m must be"},
		{"c_beta: 1}", "c_beta: 1, match_c_beta: 1}", "exactly one"},
		{"lsvi-ucb,", "dqn,", "unknown agent"},
		{"seeds: [1, 2]", "seeds: []", "seeds"},
		{"p: 0.05", "p: 0.05\nbogus: 1", "bogus"},
	} {
		cfgfiletest.Refused(t, func(b []byte) error { _, err := ParseConfig(b); return err }, smallConfig, c.from, c.to, c.want)
	}
	cfg, _ := ParseConfig([]byte(smallConfig))
	if _, err := Run(context.Background(), cfg, Options{Workers: 0}); err == nil {
		t.Error("workers = 0 accepted")
	}
}
