package tabular

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadRiverSwimFile(t *testing.T) {
	m, err := Load("testdata/riverswim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := RiverSwim(20)
	if !reflect.DeepEqual(m.P, want.P) || !reflect.DeepEqual(m.R, want.R) || !reflect.DeepEqual(m.Init, want.Init) {
		t.Fatal("riverswim.yaml differs from RiverSwim(20)")
	}
}

// TestSmallMDPHandValues checks testdata/small.json against values computed by hand.
//
// Step 2 (h=1): Q(0,0)=0.2, Q(0,1)=0, Q(1,0)=0, Q(1,1)=0.9 ⇒ V2 = (0.2, 0.9).
// Step 1 (h=0): Q(0,0) = 0 + V2(0) = 0.2; Q(0,1) = 0.5 + V2(1) = 1.4;
//
//	Q(1,0) = 1 + 0.5·0.2 + 0.5·0.9 = 1.55; Q(1,1) = 0 + 0.9 = 0.9 ⇒ V1 = (1.4, 1.55).
//
// From the uniform start V* = 1.475. The policy "always action 0" has V2 = (0.2, 0),
// V1 = (0.2, 1 + 0.5·0.2) = (0.2, 1.1), value 0.65, regret 0.825.
func TestSmallMDPHandValues(t *testing.T) {
	m, err := Load("testdata/small.json")
	if err != nil {
		t.Fatal(err)
	}
	v := m.Optimal()
	for _, c := range []struct{ got, want float64 }{
		{v.V[1][0], 0.2}, {v.V[1][1], 0.9}, {v.Q[0][0*2+1], 1.4}, {v.Q[0][1*2+0], 1.55}, {v.V[0][0], 1.4}, {v.V[0][1], 1.55}, {m.Start(v), 1.475},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("got %g, want %g", c.got, c.want)
		}
	}
	zero := NewDeterministic(2, 2)
	if g := NewRegret(m).Of(zero); math.Abs(g-0.825) > 1e-12 {
		t.Errorf("regret of always-0 = %g, want 0.825", g)
	}
	// The stochastic uniform policy: step 2 values (0.1, 0.45); step 1:
	// s0: 0.5·(0+0.1) + 0.5·(0.5+0.45) = 0.525; s1: 0.5·(1+0.275) + 0.5·(0+0.45) = 0.8625.
	u := &Policy{Prob: [][]float64{{.5, .5, .5, .5}, {.5, .5, .5, .5}}}
	pv := m.Evaluate(u)
	if math.Abs(pv.V[0][0]-0.525) > 1e-12 || math.Abs(pv.V[0][1]-0.8625) > 1e-12 {
		t.Errorf("uniform policy values %v", pv.V[0])
	}
}

func TestParseErrors(t *testing.T) {
	ok := `{"states":1,"actions":1,"horizon":1,"homogeneous":true,"init":[1],"transitions":[[[1]]],"reward":[[0.5]]}`
	if _, err := Parse([]byte(ok), "json"); err != nil {
		t.Fatalf("valid file rejected: %v", err)
	}
	cases := []struct{ data, format, want string }{
		{`{`, "json", "mdp file"},
		{strings.Replace(ok, `[[[1]]]`, `[[[-1]]]`, 1), "json", "P[0][0][0]"},
		{strings.Replace(ok, `[[[1]]]`, `[[[0.9]]]`, 1), "json", "sum to 0.9"},
		{strings.Replace(ok, `[[0.5]]`, `[[1.5]]`, 1), "json", "R[0][0][0]"},
		{strings.Replace(ok, `[[[1]]]`, `[[[1, 0]]]`, 1), "json", "transitions[0][0]"},
		{strings.Replace(ok, `"init":[1],`, ``, 1), "json", "init"},
		{strings.Replace(ok, `"states":1`, `"states":1,"colour":2`, 1), "json", "colour"},
		{strings.Replace(ok, `"horizon":1`, `"horizon":0`, 1), "json", "horizon"},
		{strings.Replace(ok, `[[0.5]]`, `[["x"]]`, 1), "json", "reward[0][0]"},
		{strings.Replace(ok, `"homogeneous":true`, `"homogeneous":false`, 1), "json", "transitions[0][0][0]"},
		{strings.Replace(ok, `"init":[1]`, `"init":[0.5]`, 1), "json", "init"},
		{"states: 1\nactions: 1\nhorizon: 1\nhomogeneous: true\ninit: [1]\ntransitions: [[[.nan]]]\nreward: [[0]]\n", "yaml", "finite"},
		{ok, "toml", "unknown format"},
		{strings.Replace(ok, `"states":1`, `"rewards":"gaussian","states":1`, 1), "json", "rewards"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.data), c.format)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want mention of %q", c.data, err, c.want)
		}
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	g, err := Garnet(GarnetConfig{S: 5, A: 3, H: 4, Branching: 2, RewardDensity: 0.5, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*MDP{g, mustLoad(t, "testdata/small.json")} {
		for _, format := range []string{"json", "yaml"} {
			back := roundTrip(t, m, format)
			if !reflect.DeepEqual(back.P, m.P) || !reflect.DeepEqual(back.R, m.R) || back.Rewards != m.Rewards {
				t.Fatalf("%s round trip changed the MDP", format)
			}
		}
	}
	p := filepath.Join(t.TempDir(), "g.yaml")
	data, _ := Marshal(g, "yaml")
	_ = os.WriteFile(p, data, 0o644)
	if _, err := Load(p); err != nil {
		t.Fatal(err)
	}
}

func mustLoad(t *testing.T, p string) *MDP {
	m, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGarnet(t *testing.T) {
	a, err := Garnet(GarnetConfig{S: 10, A: 3, H: 5, Branching: 3, RewardDensity: 0.3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Garnet(GarnetConfig{S: 10, A: 3, H: 5, Branching: 3, RewardDensity: 0.3, Seed: 7})
	c, _ := Garnet(GarnetConfig{S: 10, A: 3, H: 5, Branching: 3, RewardDensity: 0.3, Seed: 8})
	if !reflect.DeepEqual(a.P, b.P) || reflect.DeepEqual(a.P, c.P) {
		t.Fatal("Garnet is not a deterministic function of its seed")
	}
	for sa := 0; sa < 30; sa++ {
		nz := 0
		for _, p := range a.P[0][sa*10 : (sa+1)*10] {
			if p > 0 {
				nz++
			}
		}
		if nz > 3 {
			t.Fatalf("pair %d has %d next states, branching 3", sa, nz)
		}
	}
	for _, bad := range []GarnetConfig{{S: 0, A: 1, H: 1, Branching: 1}, {S: 3, A: 1, H: 1, Branching: 4},
		{S: 3, A: 1, H: 1, Branching: 1, RewardDensity: 2}, {S: 3, A: 0, H: 1, Branching: 1}, {S: 3, A: 1, H: 0, Branching: 1}} {
		if _, err := Garnet(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// FuzzParse: Parse never panics, and whatever it accepts is valid and round-trips through
// Marshal (dense or sparse, with its terminal states) to the same model.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/riverswim.yaml", "testdata/small.json", "testdata/terminal.yaml", "testdata/terminal.json", "testdata/frozenlake-4x4.json"} {
		data, _ := os.ReadFile(p)
		f.Add(data, strings.TrimPrefix(filepath.Ext(p), "."))
	}
	f.Add([]byte(`{"states":1,"actions":1,"horizon":1,"homogeneous":true,"init":[1],"transitions":[[[1]]],"reward":[[0]]}`), "json")
	f.Add([]byte(`{"states":2,"actions":1,"horizon":2,"homogeneous":true,"init":[1,0],"terminal":[1],"terminal_reward":0.5,"transitions_sparse":[[0,0,1,1]],"reward":[[0],[1]]}`), "json")
	f.Add([]byte("states: 2\nactions: 1\nhorizon: 2\nhomogeneous: false\ninit: [1, 0]\nterminal: [1]\ntransitions_sparse: [[0, 0, 0, 0, 0.5], [0, 0, 0, 1, 0.5], [1, 0, 0, 1, 1]]\nreward: [[[0], [1]], [[0.5], [1]]]\n"), "yaml")
	// Every form: homogeneous or per-step tables, deterministic or Bernoulli rewards, dense or
	// sparse, with or without terminal states, in both formats.
	for _, homog := range []bool{true, false} {
		for _, kind := range []RewardKind{Deterministic, Bernoulli} {
			m, err := Garnet(GarnetConfig{S: 3, A: 2, H: 2, Branching: 2, Homogeneous: homog, RewardDensity: 0.5, Rewards: kind, Seed: 1})
			if err != nil {
				f.Fatal(err)
			}
			term := *m
			term.P, term.Terminal, term.TerminalReward = nil, []bool{false, false, true}, 0.25
			for _, m := range []*MDP{m, &term} {
				for _, format := range []string{"json", "yaml"} {
					data, err := Marshal(m, format)
					if err != nil {
						f.Fatal(err)
					}
					f.Add(data, format)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, format string) {
		m, err := Parse(data, format)
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("accepted an invalid MDP: %v", err)
		}
		for _, format := range []string{"json", "yaml"} {
			back := roundTrip(t, m, format)
			sameModel(t, back, m)
		}
	})
}

// roundTrip marshals m in format and returns the file parsed back (failing the test on either
// error).
func roundTrip(t testing.TB, m *MDP, format string) *MDP {
	t.Helper()
	data, err := Marshal(m, format)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(data, format)
	if err != nil {
		t.Fatalf("round trip through %s failed: %v\n%s", format, err, data)
	}
	return back
}
