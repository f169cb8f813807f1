package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	lqagents "github.com/dprl/dprl/agents/lq"
	tabular "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	explin "github.com/dprl/dprl/experiment/linmdp"
	lmexp "github.com/dprl/dprl/experiment/linmix"
	explq "github.com/dprl/dprl/experiment/lq"
	"github.com/dprl/dprl/internal/bounds"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// TestBadInput: invalid values and unknown names give a clear error naming the field and a
// non-zero exit, and leave no run directory claiming success.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := putFile(t, dir, "bad.yaml", "name: x\nepisodes: 10\nseeds: [1]\ncurves: [{agent: ucbvi}]\nbogus: 1\n")
	badMDP := putFile(t, dir, "mdp.json", `{"states": 2}`)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--agent", "dp-ucbvi-jdp", "--epsilon", "-1"}, "epsilon"},
		{[]string{"run", "--agent", "dp-ucbvi-jdp", "--epsilon", "0"}, "epsilon"},
		{[]string{"run", "--agent", "dp-ucbvi-jdp", "--epsilon", "inf"}, "epsilon"},
		{[]string{"run", "--agent", "nope"}, "unknown agent"},
		{[]string{"run", "--env", "nope"}, "env.name"},
		{[]string{"run", "--episodes", "0"}, "episodes"},
		{[]string{"run", "--horizon", "0"}, "env.horizon"},
		{[]string{"run", "--beta", "1.5"}, "beta"},
		{[]string{"run", "--seeds", "x"}, "--seeds"},
		{[]string{"run", "--seeds", "5-1"}, "--seeds"},
		{[]string{"run", "--agent", "dp-ucbvi-jdp", "--epsilon", "1", "--calibration", "loose"}, "calibration"},
		{[]string{"run", "--preset", "fast"}, "preset"},
		{[]string{"run", "--multiplier", "-2"}, "multiplier"},
		{[]string{"run", "--noise", "weird"}, "noise"},
		{[]string{"run", "--config", bad}, "bogus"},
		{[]string{"run", "--config", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		{[]string{"run", "--env", "file", "--env-file", badMDP, "--episodes", "5", "--seeds", "1"}, "mdp.json"},
		{[]string{"run", "--workers", "-1", "--episodes", "5", "--seeds", "1"}, "--workers"},
		{[]string{"run", "--nope"}, "unknown flag"},
		{[]string{"reproduce", "fig9"}, "unknown reproduction"},
		{[]string{"reproduce", "qiao-fig1", "--calibration", "x"}, "calibration"},
		{[]string{"frobnicate"}, "unknown command"},
	}
	for i, c := range cases {
		out := filepath.Join(dir, fmt.Sprintf("out%d", i))
		code, _, stderr := runCLI(t, append(c.args, "--out", out, "--quiet")...)
		if code == 0 {
			t.Errorf("%v: exit 0, want non-zero", c.args)
			continue
		}
		if !strings.Contains(stderr, c.want) || !strings.HasPrefix(stderr, "dprl: error:") {
			t.Errorf("%v: stderr %q, want it to mention %q", c.args, stderr, c.want)
		}
		if _, err := os.Stat(filepath.Join(out, "manifest.json")); err == nil {
			t.Errorf("%v: a manifest was written for a failed run", c.args)
		}
	}
}

func TestList(t *testing.T) {
	code, out, _ := runCLI(t, "list")
	if code != 0 {
		t.Fatal("list failed")
	}
	for _, want := range []string{"riverswim", "garnet", "dp-ucbvi-jdp", "dp-ucbvi-ldp", "private-ucbvi-jdp", "RECONSTRUCTED", "unit", "NOT ε-private"} {
		if !strings.Contains(out, want) {
			t.Errorf("list output lacks %q", want)
		}
	}
}

// TestRunDeterministicAcrossWorkers: the same seeds give bit-identical CSVs with 1 and 2
// workers, and the manifest records the privacy report with the effective ε.
func TestRunDeterministicAcrossWorkers(t *testing.T) {
	dir := t.TempDir()
	var csvs [2][]byte
	for i, w := range []string{"1", "2"} {
		out := filepath.Join(dir, "w"+w)
		code, stdout, stderr := runCLI(t, "run", "--agent", "dp-ucbvi-jdp", "--epsilon", "1", "--calibration", "unit",
			"--episodes", "300", "--seeds", "1-3", "--workers", w, "--out", out, "--quiet")
		if code != 0 {
			t.Fatalf("run failed: %s", stderr)
		}
		if !strings.Contains(stdout, "effective ε") {
			t.Errorf("stdout does not state the effective ε: %s", stdout)
		}
		matches, _ := filepath.Glob(filepath.Join(out, "curves", "*", "*.csv"))
		if len(matches) != 1 {
			t.Fatalf("want one CSV, got %v", matches)
		}
		csvs[i], _ = os.ReadFile(matches[0])
		for _, f := range []string{"manifest.json", "summary.md", "regret-riverswim.png", "regret-riverswim.svg"} {
			if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
				t.Errorf("missing %s", f)
			}
		}
		var man map[string]any
		data, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
		if err := json.Unmarshal(data, &man); err != nil {
			t.Fatal(err)
		}
		curves := man["curves"].([]any)
		priv := curves[0].(map[string]any)["privacy"].(map[string]any)
		if priv["private_at_nominal"] != false || priv["epsilon"].(float64) <= 1 {
			t.Errorf("manifest privacy report wrong: %v", priv)
		}
	}
	if !bytes.Equal(csvs[0], csvs[1]) {
		t.Fatal("results differ between 1 and 2 workers")
	}
}

// TestListEveryAgent: `dprl list` agrees with the code. Every agent name each family's runner
// accepts appears in the family's section, on its own line, labelled as the papers' or as
// dprl's own practical agent (practical-*) and described, so a newly added agent cannot be
// missing from the listing; every agent the list names is accepted by its family (planned
// through PlanSpec); every environment of a family's run schema is listed with its parameters;
// and every reproduction is listed.
func TestListEveryAgent(t *testing.T) {
	code, out, _ := runCLI(t, "list")
	if code != 0 {
		t.Fatal("list failed")
	}
	sections := listSections(out)
	var tab []string
	for _, a := range tabular.Agents() {
		tab = append(tab, a.Name)
	}
	for _, a := range tabular.PracticalAgents() {
		tab = append(tab, a.Name)
	}
	// The runners accept exactly these names (TestRunnersAcceptListedAgents).
	accepted := map[string][]string{"tabular": tab, "linmdp": explin.AgentNames(), "linmix": lmexp.AgentNames(), "lq": explq.AgentNames()}
	r := newRegistry()
	if got := r.Names(); !slices.Equal(got, []string{"linmdp", "linmix", "lq", "tabular"}) {
		t.Fatalf("families %v: extend the accepted names of this test", got)
	}
	for fam, names := range accepted {
		lines := sections[fam]
		if len(lines) == 0 {
			t.Fatalf("dprl list has no section of family %s", fam)
		}
		listed := map[string]bool{}
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) > 1 && (f[1] == "[paper]" || strings.HasPrefix(f[1], "[practical")) {
				listed[f[0]] = true
				want := engine.LabelPaper
				if strings.HasPrefix(f[0], "practical") {
					want = engine.LabelPractical
				}
				if !strings.Contains(l, want) {
					t.Errorf("%s: list line of %s lacks the label %s: %q", fam, f[0], want, l)
				}
				if len(strings.TrimSpace(strings.SplitN(l, "]", 2)[1])) == 0 {
					t.Errorf("%s: list line of %s has no description", fam, f[0])
				}
			}
		}
		for _, n := range names {
			if !listed[n] {
				t.Errorf("dprl list does not show agent %q of family %s", n, fam)
			}
		}
		for n := range listed {
			if !slices.Contains(names, n) {
				t.Errorf("dprl list shows agent %q under family %s, which does not accept it", n, fam)
			}
			s := &engine.RunSpec{Family: fam, Agents: []string{n}, Runs: engine.Runs{Episodes: 20, Seeds: []uint64{1}}, Privacy: engine.PrivacySpec{Epsilons: []float64{1}}}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			if _, err := r.PlanSpec(s, "test"); err != nil {
				t.Errorf("dprl list shows agent %q of family %s, which PlanSpec refuses: %v", n, fam, err)
			}
		}
		f, _ := r.Lookup(fam)
		for _, e := range f.(engine.SpecEnvLister).SpecEnvs() {
			found := false
			for _, l := range lines {
				if fs := strings.Fields(l); len(fs) > 0 && fs[0] == e.Name {
					found = len(e.Params) == 0 || strings.Contains(l, "[params: "+strings.Join(e.Params, ", ")+"]")
				}
			}
			if !found {
				t.Errorf("%s: environment %s with params %v is not listed", fam, e.Name, e.Params)
			}
		}
	}
	for name, e := range r.Reproductions() {
		if !slices.ContainsFunc(sections[e.Family], func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "dprl reproduce "+name+" ") }) {
			t.Errorf("reproduction %s is not listed in the section of family %s", name, e.Family)
		}
	}
	for _, n := range []string{"practical-jdp", "practical-lsvi", "practical-vtr/jdp", "practical-ofu-rl"} {
		if !strings.Contains(out, n) {
			t.Errorf("list lacks the practical agent %s", n)
		}
	}
	for _, c := range []string{"paper", "exact", "zcdp", "laplace", "unit"} {
		if !strings.Contains(out, "  "+c+" ") {
			t.Errorf("list lacks the calibration %s", c)
		}
	}
	for _, want := range []string{"== Limits", bounds.EpsilonRange, fmt.Sprint(bounds.MaxEpisodes), fmt.Sprint(bounds.MaxSeeds)} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q", want)
		}
	}
}

// listSections splits `dprl list` into its family sections ("== family: …" up to the next
// "== ") by family name.
func listSections(out string) map[string][]string {
	sec := map[string][]string{}
	cur := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "== ") {
			cur, _, _ = strings.Cut(strings.TrimPrefix(l, "== "), ":")
			continue
		}
		if cur != "" {
			sec[cur] = append(sec[cur], l)
		}
	}
	return sec
}

// TestRunnersAcceptListedAgents: the names TestListEveryAgent checks are the ones the
// runners accept (a name list that drifted from the runner would make that test vacuous).
func TestRunnersAcceptListedAgents(t *testing.T) {
	for _, a := range tabular.Agents() {
		if _, err := tabular.Lookup(a.Name); err != nil {
			t.Error(err)
		}
	}
	for _, a := range tabular.PracticalAgents() {
		if _, err := tabular.LookupPractical(a.Name); err != nil {
			t.Error(err)
		}
	}
	for _, n := range explin.AgentNames() {
		doc := "name: x\nepisodes: 100\nseeds: [1]\ndelta: 1.0e-5\np: 0.05\ncheckpoints: 5\nepsilons: [1]\nagents: [" + n + "]\n" +
			"envs: [{name: E, kind: riverswim, n: 3, horizon: 3}]\nbeta_modes: [{name: t, c_beta: 1}]\n"
		if _, err := explin.ParseSuite([]byte(doc)); err != nil {
			t.Errorf("linear-mdp agent %s: %v", n, err)
		}
	}
	for _, c := range []lqagents.Config{lqagents.DefaultConfig(math.Inf(1), 10), lqagents.DefaultConfig(1, 10)} {
		if n := c.Name(); !slices.Contains(explq.AgentNames(), n) {
			t.Errorf("LQ agent %s is not in explq.AgentNames", n)
		}
	}
	for _, n := range []string{lqagents.PracticalName, lqagents.PracticalTheoryName, lqagents.PracticalNoiseOffName} {
		if !slices.Contains(explq.AgentNames(), n) {
			t.Errorf("LQ practical agent %s is not in explq.AgentNames", n)
		}
	}
	for _, n := range lmexp.AgentNames() {
		alg, mode, _ := strings.Cut(n, "/")
		eps := ""
		if mode != "none" {
			eps = ", epsilons: [1]"
		}
		doc := "episodes: 20\nseeds: [1]\ndelta: 1.0e-5\np: 0.05\nbeta_mults: [1]\nenvs: [{kind: two-state-hard, dim: 3, horizon: 3, q: 0.2, rho: 0.5}]\n" +
			"curves: [{algorithm: " + alg + ", mode: " + mode + eps + "}]\n"
		if _, err := lmexp.ParseConfig([]byte(doc)); err != nil {
			t.Errorf("linear-mixture agent %s: %v", n, err)
		}
	}
}
