package tabular

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestParseSparseTerminalErrors: every check of the terminal and sparse fields refuses its
// input with an error naming the field and index.
func TestParseSparseTerminalErrors(t *testing.T) {
	// S = 3, A = 1, H = 2; state 2 terminal, its row left out.
	ok := `{"states":3,"actions":1,"horizon":2,"homogeneous":true,"init":[1,0,0],"terminal":[2],"terminal_reward":0.5,` +
		`"transitions_sparse":[[0,0,1,1],[1,0,2,1]],"reward":[[0],[0],[0]]}`
	perStep := `{"states":3,"actions":1,"horizon":2,"homogeneous":false,"init":[1,0,0],"terminal":[2],` +
		`"transitions_sparse":[[0,0,0,1,1],[0,1,0,2,1],[1,0,0,2,1],[1,1,0,0,1]],"reward":[[[0],[0],[0]],[[0],[0],[0]]]}`
	okYAML := "states: 3\nactions: 1\nhorizon: 2\nhomogeneous: true\ninit: [1, 0, 0]\nterminal: [2]\n" +
		"transitions_sparse:\n  - [0, 0, 1, 1]\n  - [1, 0, 2, 1]\nreward: [[0], [0], [0]]\n"
	for _, c := range []struct{ data, format string }{{ok, "json"}, {perStep, "json"}, {okYAML, "yaml"}} {
		if _, err := Parse([]byte(c.data), c.format); err != nil {
			t.Fatalf("valid file refused: %v\n%s", err, c.data)
		}
	}
	rep := func(s, old, new string) string {
		if !strings.Contains(s, old) {
			t.Fatalf("%q not in %s", old, s)
		}
		return strings.Replace(s, old, new, 1)
	}
	dense := `"transitions":[[[0,1,0]],[[0,0,1]],[[0,0,1]]]`
	for _, c := range []struct{ name, data, format, want string }{
		{"next state out of range", rep(ok, `[1,0,2,1]`, `[1,0,3,1]`), "json", "transitions_sparse[1]: next state 3 out of range [0, 3)"},
		{"state out of range", rep(ok, `[1,0,2,1]`, `[5,0,2,1]`), "json", "transitions_sparse[1]: state 5 out of range [0, 3)"},
		{"negative state", rep(ok, `[1,0,2,1]`, `[-1,0,2,1]`), "json", "transitions_sparse[1]: state -1 out of range [0, 3)"},
		{"action out of range", rep(ok, `[0,0,1,1]`, `[0,1,1,1]`), "json", "transitions_sparse[0]: action 1 out of range [0, 1)"},
		{"step out of range", rep(perStep, `[1,1,0,0,1]`, `[2,1,0,0,1]`), "json", "transitions_sparse[3]: step 2 out of range [0, 2)"},
		{"index not an integer", rep(ok, `[0,0,1,1]`, `[0,0,1.5,1]`), "json", "transitions_sparse[0]: next state 1.5 is not an integer"},
		{"index infinite", rep(okYAML, `[0, 0, 1, 1]`, `[.inf, 0, 1, 1]`), "yaml", "transitions_sparse[0]: state +Inf is not an integer"},
		{"index NaN", rep(okYAML, `[0, 0, 1, 1]`, `[0, .nan, 1, 1]`), "yaml", "transitions_sparse[0]: action NaN is not an integer"},
		{"probability 0", rep(ok, `[1,0,2,1]`, `[1,0,2,1],[1,0,0,0]`), "json", "transitions_sparse[2]: probability 0, must be a finite number > 0"},
		{"probability negative", rep(ok, `[1,0,2,1]`, `[1,0,2,1.5],[1,0,0,-0.5]`), "json", "transitions_sparse[2]: probability -0.5"},
		{"probability NaN", rep(okYAML, `[1, 0, 2, 1]`, `[1, 0, 2, .nan]`), "yaml", "transitions_sparse[1]: probability NaN"},
		{"probability infinite", rep(okYAML, `[1, 0, 2, 1]`, `[1, 0, 2, .inf]`), "yaml", "transitions_sparse[1]: probability +Inf"},
		{"duplicate entry", rep(ok, `[0,0,1,1]`, `[0,0,1,0.5],[0,0,1,0.5]`), "json", "transitions_sparse[1]: duplicate entry (row [0][0], next state 1) of transitions_sparse[0]"},
		{"duplicate entry, per step", rep(perStep, `[1,1,0,0,1]`, `[1,1,0,0,0.5],[1,1,0,0,0.5]`), "json", "transitions_sparse[4]: duplicate entry (row [1][1][0], next state 0) of transitions_sparse[3]"},
		{"row sums to 0.9", rep(ok, `[0,0,1,1]`, `[0,0,1,0.5],[0,0,0,0.4]`), "json", "transitions_sparse: row [0][0]: probabilities sum to 0.9, want 1"},
		{"row sums to 1.1", rep(ok, `[0,0,1,1]`, `[0,0,1,0.5],[0,0,0,0.6]`), "json", "transitions_sparse: row [0][0]: probabilities sum to 1.1, want 1"},
		{"row sum, per step", rep(perStep, `[1,1,0,0,1]`, `[1,1,0,0,0.5]`), "json", "transitions_sparse: row [1][1][0]: probabilities sum to 0.5"},
		{"row missing", rep(ok, `,[1,0,2,1]`, ``), "json", "transitions_sparse: row [1][0] has no entries (state 1 is not terminal)"},
		{"row missing, per step", rep(perStep, `,[1,1,0,0,1]`, ``), "json", "transitions_sparse: row [1][1][0] has no entries (state 1 is not terminal)"},
		{"empty list", rep(ok, `[[0,0,1,1],[1,0,2,1]]`, `[]`), "json", "transitions_sparse: row [0][0] has no entries"},
		{"row of a terminal state not a distribution", rep(ok, `[1,0,2,1]`, `[1,0,2,1],[2,0,2,0.5]`), "json", "transitions_sparse: row [2][0]: probabilities sum to 0.5"},
		{"entry too short", rep(ok, `[0,0,1,1]`, `[0,0,1]`), "json", "transitions_sparse[0]: has 3 numbers, want 4 ([s, a, s', p] in a homogeneous model)"},
		{"entry of a homogeneous model in a per-step file", rep(perStep, `[0,0,0,1,1]`, `[0,0,1,1]`), "json", "transitions_sparse[0]: has 4 numbers, want 5 ([h, s, a, s', p]"},
		{"entry null", rep(ok, `[0,0,1,1]`, `null`), "json", "transitions_sparse[0]"},
		{"entry not a number", rep(ok, `[0,0,1,1]`, `[0,0,"x",1]`), "json", "transitions_sparse"},
		{"both forms", rep(ok, `"reward"`, dense+`,"reward"`), "json", "transitions, transitions_sparse: both given, want exactly one"},
		{"neither form", rep(ok, `"transitions_sparse":[[0,0,1,1],[1,0,2,1]],`, ``), "json", "transitions: missing (give transitions or transitions_sparse)"},
		{"terminal out of range", rep(ok, `"terminal":[2]`, `"terminal":[3]`), "json", "terminal[0]: state 3 out of range [0, 3)"},
		{"terminal negative", rep(ok, `"terminal":[2]`, `"terminal":[2,-1]`), "json", "terminal[1]: state -1 out of range [0, 3)"},
		{"terminal twice", rep(ok, `"terminal":[2]`, `"terminal":[2,1,2]`), "json", "terminal[2]: state 2 listed twice (also terminal[0])"},
		{"terminal too many", rep(ok, `"terminal":[2]`, `"terminal":[2,1,0,2]`), "json", "terminal[3]: state 2 listed twice (also terminal[0])"},
		{"terminal not an integer", rep(ok, `"terminal":[2]`, `"terminal":[1.5]`), "json", "terminal"},
		{"terminal_reward above 1", rep(ok, `"terminal_reward":0.5`, `"terminal_reward":1.5`), "json", "terminal_reward: 1.5 outside [0,1]"},
		{"terminal_reward negative", rep(ok, `"terminal_reward":0.5`, `"terminal_reward":-0.1`), "json", "terminal_reward: -0.1 outside [0,1]"},
		{"terminal_reward NaN", rep(okYAML, "terminal: [2]\n", "terminal: [2]\nterminal_reward: .nan\n"), "yaml", "terminal_reward: NaN outside [0,1]"},
		{"terminal_reward without terminal", rep(ok, `"terminal":[2],`, ``), "json", "terminal_reward: 0.5 given without terminal states"},
		{"terminal_reward with an empty terminal", rep(ok, `"terminal":[2]`, `"terminal":[]`), "json", "terminal_reward: 0.5 given without terminal states"},
		{"init on a terminal state", rep(ok, `"init":[1,0,0]`, `"init":[0.5,0,0.5]`), "json", "init: state 2 is terminal but has initial probability 0.5"},
		{"init on a terminal state, dense", rep(rep(ok, `"transitions_sparse":[[0,0,1,1],[1,0,2,1]]`, dense), `"init":[1,0,0]`, `"init":[0,0,1]`), "json", "init: state 2 is terminal"},
		{"dense row of a terminal state", rep(rep(ok, `"transitions_sparse":[[0,0,1,1],[1,0,2,1]]`, dense), `[[0,0,1]]]`, `[[0,0,0.5]]]`), "json", "P[0][2][0]: probabilities sum to 0.5"},
		{"unknown field", rep(ok, `"terminal":[2]`, `"terminals":[2]`), "json", "terminals"},
		{"entry_reward too short", rep(ok, `"reward":[[0],[0],[0]]`, `"reward":[[0],[0],[0]],"entry_reward":[0,1]`), "json", "entry_reward: has 2 entries, want S = 3"},
		{"entry_reward above 1", rep(ok, `"reward":[[0],[0],[0]]`, `"reward":[[0],[0],[0]],"entry_reward":[0,1.5,0]`), "json", "entry_reward[1]: 1.5 outside [0,1]"},
		{"entry_reward with Bernoulli rewards", rep(ok, `"reward":[[0],[0],[0]]`, `"rewards":"bernoulli","reward":[[0],[0],[0]],"entry_reward":[0,1,0]`), "json", "entry_reward: needs deterministic rewards"},
		{"entry_reward plus reward above 1", rep(ok, `"reward":[[0],[0],[0]]`, `"reward":[[0.5],[0],[0]],"entry_reward":[0,0.75,0]`), "json", "entry_reward[1]: reward 0.5 of R[0][0][0] plus entry reward 0.75 exceeds 1"},
		{"public_rewards not a bool", rep(ok, `"reward":[[0],[0],[0]]`, `"reward":[[0],[0],[0]],"public_rewards":1`), "json", "public_rewards"},
	} {
		_, err := Parse([]byte(c.data), c.format)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestMarshalTerminalSparse: Marshal writes terminal states and the sparse form for a model
// without a dense table, in a form Parse reads back as the same model (bit-identical tables
// and values), and a sparse file's model marshals to the same bytes again.
func TestMarshalTerminalSparse(t *testing.T) {
	for _, p := range []string{"testdata/terminal.yaml", "testdata/terminal.json"} {
		m := mustLoad(t, p)
		for _, format := range []string{"json", "yaml"} {
			data, err := Marshal(m, format)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), "terminal_reward") || strings.Contains(string(data), "transitions_sparse") != (m.P == nil) {
				t.Errorf("%s as %s:\n%s", p, format, data)
			}
			back, err := Parse(data, format)
			if err != nil {
				t.Fatalf("%s as %s: %v\n%s", p, format, err, data)
			}
			sameModel(t, back, m)
			again, _ := Marshal(back, format)
			if string(again) != string(data) {
				t.Errorf("%s as %s: not a fixed point:\n%s\n%s", p, format, data, again)
			}
		}
	}
	// A model without terminal states writes neither field, even with a stray TerminalReward
	// on an all-false Terminal (which Validate allows).
	m := mustLoad(t, "testdata/terminal.json")
	m.Terminal[3], m.Init = false, []float64{0.5, 0.5, 0, 0}
	data, err := Marshal(m, "json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"terminal":`) || strings.Contains(string(data), `"terminal_reward"`) {
		t.Errorf("no terminal state, but:\n%s", data)
	}
	if _, err := Parse(data, "json"); err != nil {
		t.Error(err)
	}
}

// TestGymExportFiles: the Python exporter's files (python/dprl/gym_export.py on FrozenLake-v1
// 4x4 under gymnasium 1.2.3: `python3 -m dprl.gym_export FrozenLake-v1 out.json`, sparse with
// terminal states, entry rewards and public_rewards; and with --absorbing, the dense file with
// absorbing terminal states) load, are the same problem (bit-close V* and V^π), and round-trip
// through Marshal with their entry rewards and public_rewards; the reward table is written as
// given (R), not with the expected entry reward folded in (Reward).
func TestGymExportFiles(t *testing.T) {
	m := mustLoad(t, "testdata/frozenlake-4x4.json")
	abs := mustLoad(t, "testdata/frozenlake-4x4-absorbing.json")
	if m.P != nil || m.Terminal == nil || m.EntryReward == nil || !m.PublicRewards || abs.P == nil || abs.Terminal != nil {
		t.Fatalf("unexpected forms: sparse %v terminal %v entry %v public %v; absorbing dense %v", m.P == nil, m.Terminal, m.EntryReward, m.PublicRewards, abs.P != nil)
	}
	pol := NewDeterministic(m.S, m.H)
	for h := range pol.Act {
		for s := range pol.Act[h] {
			pol.Act[h][s] = (s + h) % m.A
		}
	}
	for _, c := range []struct {
		what string
		a, b float64
	}{
		{"V*", m.Start(m.Optimal()), abs.Start(abs.Optimal())},
		{"V^π", m.Start(m.Evaluate(pol)), abs.Start(abs.Evaluate(pol))},
	} {
		if math.Abs(c.a-c.b) > 1e-12 {
			t.Errorf("%s: %.15g sparse with terminal states, %.15g absorbing", c.what, c.a, c.b)
		}
	}
	for _, format := range []string{"json", "yaml"} {
		data, err := Marshal(m, format)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "entry_reward") || !strings.Contains(string(data), "public_rewards") {
			t.Errorf("%s: entry_reward or public_rewards not written:\n%s", format, data)
		}
		back, err := Parse(data, format)
		if err != nil {
			t.Fatal(err)
		}
		sameModel(t, back, m)
	}
}

// TestPublicSupportRoundTrip: public_support is read, written back by Marshal (JSON and YAML)
// only when true, and absent means false.
func TestPublicSupportRoundTrip(t *testing.T) {
	m := mustLoad(t, "testdata/frozenlake-4x4.json")
	for _, public := range []bool{false, true} {
		m.PublicSupport = public
		for _, format := range []string{"json", "yaml"} {
			data, err := Marshal(m, format)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(data), "public_support"); got != public {
				t.Errorf("%s, public_support %v: written %v", format, public, got)
			}
			back, err := Parse(data, format)
			if err != nil {
				t.Fatal(err)
			}
			sameModel(t, back, m)
		}
	}
}

// sameModel fails unless a and b are the same model: shapes, rewards, initial distribution,
// terminal states and every transition row bit for bit (P itself may be absent from either).
func sameModel(t testing.TB, a, b *MDP) {
	t.Helper()
	if a.S != b.S || a.A != b.A || a.H != b.H || a.Rewards != b.Rewards || a.Name != b.Name ||
		!reflect.DeepEqual(a.R, b.R) || !reflect.DeepEqual(a.Init, b.Init) || a.TerminalReward != b.TerminalReward ||
		!reflect.DeepEqual(a.EntryReward, b.EntryReward) || a.PublicRewards != b.PublicRewards ||
		a.PublicSupport != b.PublicSupport {
		t.Fatalf("models differ: %+v\n%+v", a, b)
	}
	for s := 0; s < a.S; s++ {
		if a.IsTerminal(s) != b.IsTerminal(s) {
			t.Fatalf("state %d terminal: %v and %v", s, a.IsTerminal(s), b.IsTerminal(s))
		}
	}
	for h := 0; h < a.H; h++ {
		for s := 0; s < a.S; s++ {
			if a.IsTerminal(s) {
				continue
			}
			for x := 0; x < a.A; x++ {
				na, pa := a.Row(h, s, x)
				nb, pb := b.Row(h, s, x)
				if !reflect.DeepEqual(na, nb) || !reflect.DeepEqual(pa, pb) {
					t.Fatalf("row [%d][%d][%d]: %v %v and %v %v", h, s, x, na, pa, nb, pb)
				}
			}
		}
	}
}

// taxiFile writes, programmatically, a Taxi-sized homogeneous sparse model in the File format
// (JSON): S = 500, A = 6, H = 200, one to three next states per row, 8 terminal states (their
// rows left out), rewards in [0, 1], terminal_reward 0.1.
func taxiFile(S, A, H int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 26))
	var b strings.Builder
	terminal := []int{}
	isTerm := make([]bool, S)
	for i := 0; i < 8; i++ {
		s := S - 1 - 7*i
		terminal = append(terminal, s)
		isTerm[s] = true
	}
	init := make([]string, S)
	n := 0
	for s := range init {
		init[s] = "0"
		if !isTerm[s] && s%5 == 0 {
			n++
		}
	}
	for s := range init {
		if !isTerm[s] && s%5 == 0 {
			init[s] = fmt.Sprint(1 / float64(n))
		}
	}
	fmt.Fprintf(&b, `{"name":"taxi-sized","states":%d,"actions":%d,"horizon":%d,"homogeneous":true,"init":[%s],"terminal":%s,"terminal_reward":0.1,"transitions_sparse":[`,
		S, A, H, strings.Join(init, ","), strings.ReplaceAll(fmt.Sprint(terminal), " ", ","))
	first := true
	for s := 0; s < S; s++ {
		if isTerm[s] {
			continue
		}
		for a := 0; a < A; a++ {
			k := 1 + r.IntN(3)
			next := r.Perm(S)[:k]
			probs := []float64{1}
			if k > 1 {
				probs = []float64{0.8, 0.2, 0}[:k]
				if k == 3 {
					probs = []float64{0.5, 0.25, 0.25}
				}
			}
			for j, s2 := range next {
				if !first {
					b.WriteByte(',')
				}
				first = false
				fmt.Fprintf(&b, "[%d,%d,%d,%v]", s, a, s2, probs[j])
			}
		}
	}
	b.WriteString(`],"reward":[`)
	for s := 0; s < S; s++ {
		if s > 0 {
			b.WriteByte(',')
		}
		row := make([]string, A)
		for a := range row {
			row[a] = fmt.Sprint(float64(r.IntN(11)) / 10)
		}
		fmt.Fprintf(&b, "[%s]", strings.Join(row, ","))
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// TestTaxiSizedSparse: a Taxi-sized sparse homogeneous model (S = 500, A = 6, H = 200) loads,
// plans and evaluates (times logged; Benchmark…TaxiSized measures them), holds one shared
// table and no dense P, is valued like its absorbing model, and round-trips through Marshal.
// Its dense form is within the limits homogeneous (S·A·S = 1.5·10⁶) and refused with per-step
// tables (H·S·A·S = 3·10⁸ > 2^24).
func TestTaxiSizedSparse(t *testing.T) {
	const S, A, H = 500, 6, 200
	data := taxiFile(S, A, H, 1)
	t0 := time.Now()
	m, err := Parse(data, "json")
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	v := m.Optimal()
	t2 := time.Now()
	pi := NewDeterministic(S, H)
	for h := range pi.Act {
		for s := range pi.Act[h] {
			a := 0
			for b := 1; b < A; b++ {
				if v.Q[h][s*A+b] > v.Q[h][s*A+a] {
					a = b
				}
			}
			pi.Act[h][s] = a
		}
	}
	reg := NewRegret(m)
	g := reg.Of(pi)
	t3 := time.Now()
	t.Logf("%d bytes, %d entries: parse %v, Optimal %v, regret of the greedy policy %v", len(data), m.Entries(), t1.Sub(t0), t2.Sub(t1), t3.Sub(t2))
	if m.P != nil || m.Sparse[0] != m.Sparse[H-1] || !m.Homogeneous() {
		t.Fatal("sparse homogeneous file: want no dense table and one shared sparse table")
	}
	if g < 0 || g > 1e-9 {
		t.Errorf("regret of the greedy policy = %g, want 0", g)
	}
	abs, err := m.Absorbing()
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Start(v) - abs.Start(abs.Optimal()); d < -1e-9 || d > 1e-9 {
		t.Errorf("V* differs from the absorbing model's by %g", d)
	}
	back := roundTrip(t, m, "json")
	sameModel(t, back, m)
	if !reflect.DeepEqual(back.Optimal(), v) {
		t.Error("the marshalled model plans differently")
	}
	// The dense form: accepted by size when homogeneous, refused with per-step tables.
	shell := func(homog bool) string {
		return fmt.Sprintf(`{"states":%d,"actions":%d,"horizon":%d,"homogeneous":%v,"init":[1],"transitions":[],"reward":[]}`, S, A, H, homog)
	}
	if _, err := Parse([]byte(shell(true)), "json"); err == nil || strings.Contains(err.Error(), "limit") {
		t.Errorf("dense homogeneous Taxi-sized: error %v, want a contents error", err)
	}
	if _, err := Parse([]byte(shell(false)), "json"); err == nil || !strings.Contains(err.Error(), "states*actions*states*horizon = 300000000 exceeds the limit 2^24") {
		t.Errorf("dense per-step Taxi-sized: error %v, want the size limit", err)
	}
}

// BenchmarkOptimalTaxiSized: exact planning on the Taxi-sized sparse model.
func BenchmarkOptimalTaxiSized(b *testing.B) {
	m, err := Parse(taxiFile(500, 6, 200, 1), "json")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Optimal()
	}
}

// BenchmarkParseTaxiSized: loading the Taxi-sized sparse file (JSON).
func BenchmarkParseTaxiSized(b *testing.B) {
	data := taxiFile(500, 6, 200, 1)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data, "json"); err != nil {
			b.Fatal(err)
		}
	}
}
