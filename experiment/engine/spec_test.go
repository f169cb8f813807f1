package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/testfiles"
)

func TestIsRunSpec(t *testing.T) {
	for _, c := range []struct {
		doc  string
		want bool
	}{
		{"agents: [a]\nepisodes: 1\nseeds: [1]\n", true},
		{"family: lq\nagents: [a]\nprivacy: {epsilons: [1]}\n", true},
		{"agents: [a]\ncurves: []\n", false},                  // a family's own key
		{"name: x\nepisodes: 1\nseeds: [1]\n", false},         // no agents
		{"blocks: [{agents: [a]}]\n", false},                  // linmdp suite
		{"agents: [a]\nenvs: [{kind: latentriver}]\n", false}, // linmdp single block
		{"- agents\n", false},                                 // not a mapping
		{"agents: [a]\n---\nagents: [b]\n", true},             // the strict decoder refuses it later
		{"", false},
	} {
		if got := IsRunSpec([]byte(c.doc)); got != c.want {
			t.Errorf("IsRunSpec(%q) = %v, want %v", c.doc, got, c.want)
		}
	}
}

func TestParseRunSpec(t *testing.T) {
	s, err := ParseRunSpec([]byte("agents: [a, b]\nepisodes: 10\nseeds: [3, 1]\nprivacy: {epsilons: [0.5, 1], calibration: strict}\n"), "fam")
	if err != nil {
		t.Fatal(err)
	}
	if s.Family != "fam" || s.Name != "run" || s.Privacy.Delta != DefaultDelta || s.Privacy.Noise != "seeded" ||
		s.Multipliers.Bonus != 1 || s.Privacy.Calibration != "exact" {
		t.Errorf("defaults not applied: %+v", s)
	}
	const ok = "agents: [a]\nepisodes: 10\nseeds: [1]\n"
	for _, c := range []struct{ doc, want string }{
		{"agents: []\nepisodes: 10\nseeds: [1]\n", "agents"},
		{"agents: [a, a]\nepisodes: 10\nseeds: [1]\n", "agents[1]"},
		{"agents: ['']\nepisodes: 10\nseeds: [1]\n", "agents[0]"},
		{"agents: [a]\nepisodes: 0\nseeds: [1]\n", "episodes"},
		{"agents: [a]\nepisodes: 10\nseeds: []\n", "seeds"},
		{ok + "name: ../x\n", "name"},
		{ok + "name: ''\n", "name"},
		{ok + "privacy: {epsilons: [0]}\n", "privacy.epsilons[0]"},
		{ok + "privacy: {epsilons: [.nan]}\n", "privacy.epsilons[0]"},
		{ok + "privacy: {epsilons: [1e10]}\n", "privacy.epsilons[0]"},
		{ok + "privacy: {delta: 1}\n", "privacy.delta"},
		{ok + "privacy: {delta: 0}\n", "privacy.delta"},
		{ok + "privacy: {noise: loud}\n", "privacy.noise"},
		{ok + "privacy: {calibration: lax}\n", "privacy.calibration"},
		{ok + "multipliers: {bonus: -1}\n", "multipliers.bonus"},
		{ok + "multipliers: {bonus: 0}\n", "multipliers.bonus"},
		{ok + "env: {name: x, file: f}\n", "env.file"},
		{ok + "env: {name: file}\n", "env.file"},
		{ok + "env: {params: {h: .inf}}\n", "env.params.h"},
		{ok + "bogus: 1\n", "bogus"},
		{"agents: [a, b]\nepisodes: 10000000\nseeds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27]\n", "2^29"},
	} {
		_, err := ParseRunSpec([]byte(c.doc), "fam")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseRunSpec(%q) = %v, want an error naming %q", c.doc, err, c.want)
		}
	}
	if _, err := ParseRunSpec([]byte(ok), ""); err == nil || !strings.Contains(err.Error(), "family") {
		t.Errorf("no family: %v", err)
	}
}

func TestRunSpecParams(t *testing.T) {
	s := &RunSpec{Env: EnvSpec{Name: "e", Params: map[string]float64{"h": 5, "q": 0.25}}}
	if err := s.CheckParams("h", "q"); err != nil {
		t.Error(err)
	}
	if err := s.CheckParams("h"); err == nil || !strings.Contains(err.Error(), "env.params.q") {
		t.Errorf("CheckParams: %v", err)
	}
	if v, err := s.IntParam("h", 1, 1, 10); v != 5 || err != nil {
		t.Errorf("IntParam h = %d, %v", v, err)
	}
	if v, err := s.IntParam("missing", 7, 1, 10); v != 7 || err != nil {
		t.Errorf("IntParam default = %d, %v", v, err)
	}
	if _, err := s.IntParam("q", 1, 0, 10); err == nil || !strings.Contains(err.Error(), "integer") {
		t.Errorf("IntParam fractional: %v", err)
	}
	if _, err := s.IntParam("h", 1, 6, 10); err == nil || !strings.Contains(err.Error(), "[6, 10]") {
		t.Errorf("IntParam range: %v", err)
	}
	if _, err := s.FloatParam("q", 0, 0.5, 1); err == nil || !strings.Contains(err.Error(), "env.params.q") {
		t.Errorf("FloatParam range: %v", err)
	}
}

// TestPlanSpecFamilyWithout: a family that does not plan RunSpecs says which do.
func TestPlanSpecFamilyWithout(t *testing.T) {
	r := &Registry{}
	r.Register(fakeFamily{})
	_, err := r.PlanSpec(&RunSpec{Family: "fake"}, "x")
	if err == nil || !strings.Contains(err.Error(), "own sweep blocks") {
		t.Errorf("PlanSpec: %v", err)
	}
}

// TestCheckOut: the read-only check refuses exactly what Execute would refuse.
func TestCheckOut(t *testing.T) {
	dir := t.TempDir()
	if err := CheckOut(filepath.Join(dir, "new"), false); err != nil {
		t.Errorf("new directory: %v", err)
	}
	done := filepath.Join(dir, "done")
	mustWrite(t, filepath.Join(done, "manifest.json"))
	if err := rundir.Claim(done, "manifest.json"); err != nil { // written by an earlier run
		t.Fatal(err)
	}
	if err := CheckOut(done, false); !errors.Is(err, rundir.ErrEarlierRun) {
		t.Errorf("completed run: %v, want ErrEarlierRun", err)
	}
	if err := CheckOut(done, true); err != nil {
		t.Errorf("completed run with force: %v", err)
	}
	resumable := filepath.Join(dir, "interrupted")
	mustWrite(t, filepath.Join(resumable, UnitsDir, "x.unit"))
	mustWrite(t, filepath.Join(resumable, "curves", "partial.csv"))
	if err := CheckOut(resumable, false); err != nil {
		t.Errorf("interrupted run: %v (Execute resumes it)", err)
	}
	if _, err := os.Stat(filepath.Join(resumable, "curves", "partial.csv")); err != nil {
		t.Errorf("CheckOut changed the directory: %v", err)
	}
}

func mustWrite(t *testing.T, path string) {
	t.Helper()
	testfiles.Write(t, "", map[string]string{path: "{}"}, 0o644)
}
