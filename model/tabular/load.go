package tabular

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/dprl/dprl/internal/strictdecode"

	"go.yaml.in/yaml/v3"
)

// File is the on-disk form of an MDP (JSON or YAML; unknown fields are rejected):
//
//	name: two-state            # optional
//	states: 2                  # S
//	actions: 2                 # A
//	horizon: 3                 # H
//	rewards: deterministic     # or bernoulli (realised reward 1 w.p. the mean)
//	homogeneous: true          # one table for all steps; false: a leading [H] index
//	init: [1, 0]               # d_1, length S; no mass on a terminal state
//	terminal: [1]              # optional: the terminal states (entering one ends the episode)
//	terminal_reward: 0         # optional, default 0, in [0,1]; only with terminal
//	transitions:               # homogeneous: [S][A][S]; otherwise [H][S][A][S]
//	  - [[1, 0], [0.5, 0.5]]
//	  - [[0, 1], [0, 1]]
//	reward:                    # homogeneous: [S][A]; otherwise [H][S][A]; values in [0,1]
//	  - [0, 0.1]
//	  - [1, 0]
//	entry_reward: [0, 0.5]     # optional, length S: reward on entering each state (see below)
//	public_rewards: false      # optional: the reward function is public structure (see below)
//	public_support: false      # optional: the transitions' support is public structure (see below)
//	reward_map:                # optional, informational (RewardMap)
//	  scale: 0.01              # reward = scale·original + offset
//	  offset: 1
//	  min: -100                # the original table's smallest and largest reward
//	  max: -1
//
// Probabilities must be finite, non-negative and sum to 1 within 1e-9 (ProbTol).
//
// Terminal states. terminal lists the states (each once, in [0, S)) whose entry ends the
// episode; an empty list is the same as none. terminal_reward is the mean reward credited per
// remaining step after the end (MDP.TerminalReward): a terminal state at step h is worth
// terminal_reward·(H−h) under every policy, as if it were absorbing with that reward. It is
// refused without terminal states (unless 0). An exporter that maps its rewards affinely
// (reward_map) gives the image of a reward of 0, its offset. The reward table, and the dense
// transition table, still have the rows of terminal states (never used; a dense row must still
// be a probability vector).
//
// Entry rewards (MDP.EntryReward): entry_reward[s'] ∈ [0, 1] is earned on entering s' at any
// step, in addition to reward[(h,)s][a]: the mean reward of (h, s, a) becomes reward +
// Σ P(s'|s,a)·entry_reward[s']. They need deterministic rewards, and reward + entry_reward[s']
// ≤ 1 on every transition. public_rewards: true (MDP.PublicRewards) declares the reward
// function (reward, entry_reward, terminal_reward) public structure, as a simulator's
// published table is: an agent may read it and spend no privacy budget on rewards; the
// model's values do not change.
//
// Public support. public_support: true (MDP.PublicSupport) declares the support of the
// transitions — for every (h,) s, a the set of next states s' with P(s'|s,a) > 0, the rules of
// the environment (FrozenLake's slip to three neighbours), not the probabilities — public
// structure, as a simulator's published transition table is: an agent may read the non-zero
// pattern of the table. The model's values do not change. On a deterministic environment the
// support is the whole transition function.
//
// Sparse transitions. Instead of transitions (exactly one of the two is given), a file may list
// the non-zero transition probabilities:
//
//	transitions_sparse:        # homogeneous: [s, a, s', p]; otherwise [h, s, a, s', p]
//	  - [0, 0, 0, 1]
//	  - [0, 1, 0, 0.5]
//	  - [0, 1, 1, 0.5]
//
// in any order: indices are integers in range (h < H, s, s' < S, a < A), p is finite and > 0,
// no (h,) s, a, s' occurs twice, and every row (h,) s, a of a non-terminal state sums to 1
// within 1e-9. Rows of terminal states may be omitted (if given they must sum to 1 too). The
// model keeps its transitions as compressed rows only (MDP.Sparse; P is nil).
//
// Size limits, checked before anything proportional to S, A or H is allocated: S, A and H each
// in [1, 65536]; dense transitions with per-step tables H·S·A·S ≤ 2^24 entries (MaxEntries),
// homogeneous S·A·S ≤ 2^24; sparse transitions at most 2^24 entries (the list's length, checked
// before it is converted); and always H·S·A ≤ 2^24 (CheckSteps: the per-step values and
// rewards every planner holds). The document itself is decoded first, whole: Load reads at
// most 64 MiB (strictdecode.MaxFileSize, through boundedread), and a YAML document is refused
// beforehand if its node tree would not fit the memory budget (membudget.CheckYAML). Parse
// bounds nothing itself: a caller that does not go through Load bounds data (the service's
// inline models are written to a file and loaded with Load).
//
// Marshal writes the dense form when the model holds its dense table P and that table is at
// most 8 times as many numbers as the sparse list would be; otherwise (a model read from a
// sparse file, a large sparse model) the sparse form, its entries in increasing (h,) s, a, s'.
type File struct {
	Name        string    `json:"name,omitempty" yaml:"name,omitempty"`
	States      int       `json:"states" yaml:"states"`
	Actions     int       `json:"actions" yaml:"actions"`
	Horizon     int       `json:"horizon" yaml:"horizon"`
	Rewards     string    `json:"rewards,omitempty" yaml:"rewards,omitempty"`
	Homogeneous bool      `json:"homogeneous" yaml:"homogeneous"`
	Init        []float64 `json:"init" yaml:"init"`
	// Terminal lists the terminal states; TerminalReward is MDP.TerminalReward.
	Terminal       []int   `json:"terminal,omitempty" yaml:"terminal,omitempty"`
	TerminalReward float64 `json:"terminal_reward,omitempty" yaml:"terminal_reward,omitempty"`
	// Exactly one of Transitions (dense, nested lists shaped according to Homogeneous) and
	// TransitionsSparse (entries [(h,) s, a, s', p]) is given.
	Transitions       any         `json:"transitions,omitempty" yaml:"transitions,omitempty"`
	TransitionsSparse [][]float64 `json:"transitions_sparse,omitempty" yaml:"transitions_sparse,omitempty"`
	Reward            any         `json:"reward" yaml:"reward"`
	// EntryReward and PublicRewards are MDP.EntryReward and MDP.PublicRewards.
	EntryReward   []float64 `json:"entry_reward,omitempty" yaml:"entry_reward,omitempty"`
	PublicRewards bool      `json:"public_rewards,omitempty" yaml:"public_rewards,omitempty"`
	// PublicSupport is MDP.PublicSupport.
	PublicSupport bool `json:"public_support,omitempty" yaml:"public_support,omitempty"`
	// RewardMap, optional, records how the rewards of a model exported from elsewhere were
	// mapped into [0, 1] (see RewardMap). It is validated and otherwise ignored: the model is
	// the one given by reward, and Marshal does not write it back.
	RewardMap *RewardMap `json:"reward_map,omitempty" yaml:"reward_map,omitempty"`
}

// RewardMap is the affine map r = Scale·r₀ + Offset that took the rewards r₀ of an original
// table (for example a Gymnasium toy-text environment, python/dprl/gym_export.py) into [0, 1];
// Min and Max are the smallest and largest original reward r₀. A tool that made terminal states
// absorbing gives them reward Offset, the image of an original reward of 0, so that every
// return, H steps long, is Scale·(original return) + H·Offset and the policies keep their order.
// All four fields are required (unknown fields are refused like everywhere in the file); the
// map must be increasing (Scale > 0), Min ≤ Max, and take [Min, Max] into [0, 1] (within
// 1e-9). It does not change the model: regret and values are those of the mapped rewards.
type RewardMap struct {
	Scale  *float64 `json:"scale" yaml:"scale"`
	Offset *float64 `json:"offset" yaml:"offset"`
	Min    *float64 `json:"min" yaml:"min"`
	Max    *float64 `json:"max" yaml:"max"`
}

// Validate checks the map; errors name the field (reward_map.scale, …).
func (r *RewardMap) Validate() error {
	fields := []struct {
		name string
		v    *float64
	}{{"scale", r.Scale}, {"offset", r.Offset}, {"min", r.Min}, {"max", r.Max}}
	for _, f := range fields {
		if f.v == nil {
			return fmt.Errorf("reward_map.%s: missing (scale, offset, min and max are required)", f.name)
		}
		if math.IsNaN(*f.v) || math.IsInf(*f.v, 0) {
			return fmt.Errorf("reward_map.%s: want a finite number, got %v", f.name, *f.v)
		}
	}
	scale, offset, lo, hi := *r.Scale, *r.Offset, *r.Min, *r.Max
	const tol = 1e-9
	switch {
	case !(scale > 0):
		return fmt.Errorf("reward_map.scale: must be > 0 (an increasing map), got %v", scale)
	case lo > hi:
		return fmt.Errorf("reward_map.min: %v exceeds reward_map.max %v", lo, hi)
	case scale*lo+offset < -tol:
		return fmt.Errorf("reward_map: min %v maps to %v, below 0", lo, scale*lo+offset)
	case scale*hi+offset > 1+tol:
		return fmt.Errorf("reward_map: max %v maps to %v, above 1", hi, scale*hi+offset)
	}
	return nil
}

// MaxEntries bounds every table a model holds and every product the size checks guard:
// the dense transition tables (H·S·A·S entries with per-step tables, S·A·S homogeneous), the
// entries of sparse transitions, and H·S·A (the per-step values, Q-values and rewards of every
// planner). Files and Garnet configurations beyond it are refused before anything is
// allocated. What an agent allocates for a run (per-step counts of H·S·A·S entries for most)
// is not bounded here: dprl run estimates it against its memory budget (internal/membudget,
// docs/limits.md).
const MaxEntries = 1 << 24

// maxDim bounds each of S, A and H on its own (so that their products cannot overflow).
const maxDim = 1 << 16

// CheckSize checks S, A and H against their bounds ([1, 65536] each) and H·S·A·S ≤ MaxEntries
// without allocating anything: the bound of H dense per-step tables (a file with per-step
// dense transitions, a Garnet configuration, and the per-step counts most agents keep). A
// caller with one table for every step passes H = 1 and checks the horizon with CheckSteps
// (as NewHomogeneous does; a homogeneous dense file is checked alike, S·A·S ≤ MaxEntries, with
// its own message). prefix is prepended to the field names (e.g. "garnet.").
func CheckSize(prefix string, S, A, H int) error {
	if err := checkDims(prefix, S, A, H); err != nil {
		return err
	}
	// Each factor is at most 2^16, so the product fits in 64 bits.
	if n := uint64(S) * uint64(A) * uint64(S) * uint64(H); n > MaxEntries {
		return fmt.Errorf("%sstates*actions*states*horizon = %d exceeds the limit 2^24 entries (%d·%d·%d·%d; every agent allocates tables of this size)", prefix, n, S, A, S, H)
	}
	return nil
}

// checkDims checks S, A and H against [1, 65536] each.
func checkDims(prefix string, S, A, H int) error {
	switch {
	case S < 1 || S > maxDim:
		return fmt.Errorf("%sstates: must be in [1, %d], got %d", prefix, maxDim, S)
	case A < 1 || A > maxDim:
		return fmt.Errorf("%sactions: must be in [1, %d], got %d", prefix, maxDim, A)
	case H < 1 || H > maxDim:
		return fmt.Errorf("%shorizon: must be in [1, %d], got %d", prefix, maxDim, H)
	}
	return nil
}

// checkFileSize checks the sizes of a file's model before anything is allocated (File's "Size
// limits"); entries is the length of transitions_sparse.
func (f *File) checkFileSize(entries int) error {
	S, A, H := f.States, f.Actions, f.Horizon
	if err := checkDims("", S, A, H); err != nil {
		return err
	}
	switch {
	case f.TransitionsSparse != nil:
		if entries > MaxEntries {
			return fmt.Errorf("transitions_sparse: %d entries exceed the limit 2^24", entries)
		}
	case f.Homogeneous:
		if n := uint64(S) * uint64(A) * uint64(S); n > MaxEntries {
			return fmt.Errorf("states*actions*states = %d exceeds the limit 2^24 entries (%d·%d·%d; a dense table: give transitions_sparse instead)", n, S, A, S)
		}
	default:
		if err := CheckSize("", S, A, H); err != nil {
			return err
		}
	}
	return CheckSteps("", S, A, H)
}

// Load reads an MDP from a .json, .yaml or .yml file.
func Load(path string) (*MDP, error) { return strictdecode.Load(path, Parse) }

// Parse reads an MDP in the File format; format is "json", "yaml" or "yml".
func Parse(data []byte, format string) (*MDP, error) {
	var f File
	if err := strictdecode.Decode(data, format, &f); err != nil {
		return nil, fmt.Errorf("mdp file: %w", err)
	}
	return f.MDP()
}

// MDP converts and validates the file contents.
func (f *File) MDP() (*MDP, error) {
	S, A, H := f.States, f.Actions, f.Horizon
	if err := f.checkFileSize(len(f.TransitionsSparse)); err != nil {
		return nil, err
	}
	m := &MDP{Name: f.Name, S: S, A: A, H: H, Init: f.Init, EntryReward: f.EntryReward, PublicRewards: f.PublicRewards,
		PublicSupport: f.PublicSupport}
	if m.Name == "" {
		m.Name = "file"
	}
	switch f.Rewards {
	case "", "deterministic":
		m.Rewards = Deterministic
	case "bernoulli":
		m.Rewards = Bernoulli
	default:
		return nil, fmt.Errorf("rewards: unknown kind %q (allowed: deterministic, bernoulli)", f.Rewards)
	}
	if f.Init == nil {
		return nil, fmt.Errorf("init: missing (want %d probabilities)", S)
	}
	if f.RewardMap != nil {
		if err := f.RewardMap.Validate(); err != nil {
			return nil, err
		}
	}
	if err := f.terminal(m); err != nil {
		return nil, err
	}
	if f.Transitions != nil && f.TransitionsSparse != nil {
		return nil, fmt.Errorf("transitions, transitions_sparse: both given, want exactly one (dense or sparse)")
	}
	steps := H
	if f.Homogeneous {
		steps = 1
	}
	if f.TransitionsSparse != nil {
		tables, err := f.sparse(m)
		if err != nil {
			return nil, err
		}
		m.Sparse = make([]*SparseTable, H)
		for h := range m.Sparse {
			m.Sparse[h] = tables[min(h, steps-1)]
		}
	} else {
		tr, err := numbers(f.Transitions, "transitions", shape(f.Homogeneous, H, S, A, S))
		if err != nil {
			if f.Transitions == nil {
				err = fmt.Errorf("transitions: missing (give transitions or transitions_sparse)")
			}
			return nil, err
		}
		per := S * A * S
		m.P = make([][]float64, H)
		for h := range m.P {
			k := min(h, steps-1)
			m.P[h] = tr[k*per : (k+1)*per]
		}
	}
	rw, err := numbers(f.Reward, "reward", shape(f.Homogeneous, H, S, A))
	if err != nil {
		return nil, err
	}
	perR := S * A
	m.R = make([][]float64, H)
	for h := range m.R {
		k := min(h, steps-1)
		m.R[h] = rw[k*perR : (k+1)*perR]
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// terminal sets m.Terminal and m.TerminalReward from the file, checking the indices.
func (f *File) terminal(m *MDP) error {
	r := f.TerminalReward
	if !(r >= 0 && r <= 1) {
		return fmt.Errorf("terminal_reward: %v outside [0,1]", r)
	}
	if len(f.Terminal) == 0 {
		if r != 0 {
			return fmt.Errorf("terminal_reward: %v given without terminal states (terminal)", r)
		}
		return nil
	}
	first := make([]int, m.S) // 1 + the position of each state's first listing
	for i, s := range f.Terminal {
		if s < 0 || s >= m.S {
			return fmt.Errorf("terminal[%d]: state %d out of range [0, %d)", i, s, m.S)
		}
		if first[s] != 0 {
			return fmt.Errorf("terminal[%d]: state %d listed twice (also terminal[%d])", i, s, first[s]-1)
		}
		first[s] = i + 1
	}
	m.Terminal = make([]bool, m.S)
	for _, s := range f.Terminal {
		m.Terminal[s] = true
	}
	m.TerminalReward = r
	return nil
}

// sparseEntry is one transition of a sparse file, placed in its row.
type sparseEntry struct {
	next int32
	src  int32 // index in transitions_sparse
	p    float64
}

// sparse converts transitions_sparse into compressed tables (one, or one per step), checking
// every entry and row; m holds S, A, H and Terminal. The list's length was bounded by
// checkFileSize, and the rows by CheckSteps.
func (f *File) sparse(m *MDP) ([]*SparseTable, error) {
	S, A := m.S, m.A
	steps, want, form := m.H, 5, "[h, s, a, s', p] with per-step tables (homogeneous: false)"
	if f.Homogeneous {
		steps, want, form = 1, 4, "[s, a, s', p] in a homogeneous model"
	}
	rows := steps * S * A
	n := len(f.TransitionsSparse)
	row := make([]int32, n)
	names := []string{"step", "state", "action", "next state"}[5-want:]
	bounds := []int{m.H, S, A, S}[5-want:]
	for i, e := range f.TransitionsSparse {
		if len(e) != want {
			return nil, fmt.Errorf("transitions_sparse[%d]: has %d numbers, want %d (%s)", i, len(e), want, form)
		}
		var v [4]int
		for j, x := range e[:want-1] {
			if x != math.Trunc(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("transitions_sparse[%d]: %s %v is not an integer", i, names[j], x)
			}
			if x < 0 || x >= float64(bounds[j]) {
				return nil, fmt.Errorf("transitions_sparse[%d]: %s %v out of range [0, %d)", i, names[j], x, bounds[j])
			}
			v[j] = int(x)
		}
		if p := e[want-1]; !(p > 0) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("transitions_sparse[%d]: probability %v, must be a finite number > 0 (leave zeros out)", i, p)
		}
		h := 0
		if want == 5 {
			h, v = v[0], [4]int{v[1], v[2], v[3]}
		}
		row[i] = int32((h*S+v[0])*A + v[1])
	}
	rowName := func(r int) string {
		h, sa := r/(S*A), r%(S*A)
		if f.Homogeneous {
			return fmt.Sprintf("[%d][%d]", sa/A, sa%A)
		}
		return fmt.Sprintf("[%d][%d][%d]", h, sa/A, sa%A)
	}
	missing := func(r int) error {
		return fmt.Errorf("transitions_sparse: row %s has no entries (state %d is not terminal)", rowName(r), (r%(S*A))/A)
	}
	// Every row of a non-terminal state needs an entry. With fewer entries than such rows,
	// name the first empty one before allocating anything proportional to S·A.
	nonTerminal := S
	for _, t := range m.Terminal {
		if t {
			nonTerminal--
		}
	}
	if uint64(n) < uint64(steps)*uint64(nonTerminal)*uint64(A) {
		sorted := slices.Clone(row)
		slices.Sort(sorted)
		j := 0
		for r := 0; r < rows; r++ {
			if m.IsTerminal((r % (S * A)) / A) {
				continue
			}
			for j < n && sorted[j] < int32(r) {
				j++
			}
			if j == n || sorted[j] != int32(r) {
				return nil, missing(r)
			}
		}
	}
	// Place the entries in their rows: off counts, then (after the prefix sums) serves as each
	// row's cursor, then is shifted back to the row starts.
	off := make([]int32, rows+1)
	for _, r := range row {
		off[r+1]++
	}
	for r := 0; r < rows; r++ {
		off[r+1] += off[r]
	}
	ents := make([]sparseEntry, n)
	for i, e := range f.TransitionsSparse {
		r := row[i]
		ents[off[r]] = sparseEntry{next: int32(e[want-2]), src: int32(i), p: e[want-1]}
		off[r]++
	}
	copy(off[1:], off[:rows])
	off[0] = 0
	row = nil
	for r := 0; r < rows; r++ {
		es := ents[off[r]:off[r+1]]
		slices.SortFunc(es, func(x, y sparseEntry) int {
			if x.next != y.next {
				return int(x.next - y.next)
			}
			return int(x.src - y.src)
		})
		s := (r % (S * A)) / A
		if len(es) == 0 {
			if m.IsTerminal(s) {
				continue
			}
			return nil, missing(r)
		}
		sum := 0.0
		for j, e := range es {
			if j > 0 && e.next == es[j-1].next {
				return nil, fmt.Errorf("transitions_sparse[%d]: duplicate entry (row %s, next state %d) of transitions_sparse[%d]", e.src, rowName(r), e.next, es[j-1].src)
			}
			sum += e.p
		}
		if math.Abs(sum-1) > ProbTol {
			return nil, fmt.Errorf("transitions_sparse: row %s: probabilities sum to %.12g, want 1 (tolerance %g)", rowName(r), sum, ProbTol)
		}
	}
	next, prob := make([]int32, n), make([]float64, n)
	for j, e := range ents {
		next[j], prob[j] = e.next, e.p
	}
	if steps == 1 {
		return []*SparseTable{{Off: off, Next: next, Prob: prob}}, nil
	}
	tables := make([]*SparseTable, steps)
	for k := range tables {
		lo, hi := k*S*A, (k+1)*S*A
		t := &SparseTable{Off: make([]int32, S*A+1)}
		for i := range t.Off {
			t.Off[i] = off[lo+i] - off[lo]
		}
		t.Next, t.Prob = next[off[lo]:off[hi]:off[hi]], prob[off[lo]:off[hi]:off[hi]]
		tables[k] = t
	}
	return tables, nil
}

func shape(homogeneous bool, H int, dims ...int) []int {
	if homogeneous {
		return dims
	}
	return append([]int{H}, dims...)
}

// numbers flattens a nested list of the given shape, naming the offending index on error. It
// checks the whole shape before it allocates the result (a short file cannot make it allocate
// the declared size), and formats an index path only for an error.
func numbers(v any, field string, dims []int) ([]float64, error) {
	if v == nil {
		return nil, fmt.Errorf("%s: missing", field)
	}
	idx := make([]int, len(dims))
	path := func(depth int) string {
		var b strings.Builder
		b.WriteString(field)
		for _, i := range idx[:depth] {
			fmt.Fprintf(&b, "[%d]", i)
		}
		return b.String()
	}
	var out []float64
	var walk func(v any, depth int) error
	walk = func(v any, depth int) error {
		if depth == len(dims) {
			x, ok := toFloat(v)
			if !ok {
				return fmt.Errorf("%s: want a number, got %v", path(depth), v)
			}
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%s: want a finite number, got %v", path(depth), x)
			}
			if out != nil {
				out = append(out, x)
			}
			return nil
		}
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want a list of %d entries, got %T", path(depth), dims[depth], v)
		}
		if len(list) != dims[depth] {
			return fmt.Errorf("%s: has %d entries, want %d", path(depth), len(list), dims[depth])
		}
		for i, e := range list {
			idx[depth] = i
			if err := walk(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(v, 0); err != nil {
		return nil, err
	}
	size := 1
	for _, d := range dims {
		size *= d
	}
	out = make([]float64, 0, size)
	if err := walk(v, 0); err != nil {
		return nil, err
	}
	return out, nil
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

// Marshal encodes m in the File format, as JSON when format is "json", else YAML: homogeneous
// when every step has the same transitions and rewards (Homogeneous), with its terminal states
// (if any state is terminal), entry rewards, public_rewards and public_support, dense or sparse by File's rule (the dense form when m holds P
// and it has at most 8 times as many numbers as the sparse list).
func Marshal(m *MDP, format string) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	homog := m.Homogeneous()
	steps := m.H
	if homog {
		steps = 1
	}
	f := File{Name: m.Name, States: m.S, Actions: m.A, Horizon: m.H, Rewards: m.Rewards.String(), Homogeneous: homog, Init: m.Init,
		EntryReward: m.EntryReward, PublicRewards: m.PublicRewards, PublicSupport: m.PublicSupport}
	for s := 0; s < m.S; s++ {
		if m.IsTerminal(s) {
			f.Terminal = append(f.Terminal, s)
		}
	}
	if f.Terminal != nil {
		f.TerminalReward = m.TerminalReward
	}
	per := 4
	if !homog {
		per = 5
	}
	entries := 0
	for h := 0; h < steps; h++ {
		entries += m.Sparse[h].Entries()
	}
	dense := m.P != nil && uint64(steps)*uint64(m.S)*uint64(m.A)*uint64(m.S) <= 8*uint64(per)*uint64(entries)
	rewards := func(h int) any {
		r := make([]any, m.S)
		for s := 0; s < m.S; s++ {
			ra := make([]any, m.A)
			for a := 0; a < m.A; a++ {
				ra[a] = m.R[h][s*m.A+a] // not Reward, which adds the expected entry reward
			}
			r[s] = ra
		}
		return r
	}
	trans := func(h int) any {
		p := make([]any, m.S)
		for s := 0; s < m.S; s++ {
			pa := make([]any, m.A)
			for a := 0; a < m.A; a++ {
				row := make([]any, m.S)
				for s2, x := range m.Trans(h, s, a) {
					row[s2] = x
				}
				pa[a] = row
			}
			p[s] = pa
		}
		return p
	}
	if !dense {
		f.TransitionsSparse = make([][]float64, 0, entries)
		for h := 0; h < steps; h++ {
			for s := 0; s < m.S; s++ {
				for a := 0; a < m.A; a++ {
					next, prob := m.Row(h, s, a)
					for j, s2 := range next {
						e := []float64{float64(h), float64(s), float64(a), float64(s2), prob[j]}
						f.TransitionsSparse = append(f.TransitionsSparse, e[5-per:])
					}
				}
			}
		}
	}
	if homog {
		if dense {
			f.Transitions = trans(0)
		}
		f.Reward = rewards(0)
	} else {
		ps, rs := make([]any, m.H), make([]any, m.H)
		for h := range ps {
			if dense {
				ps[h] = trans(h)
			}
			rs[h] = rewards(h)
		}
		if dense {
			f.Transitions = ps
		}
		f.Reward = rs
	}
	if dense {
		// The dense form as it always was (golden files and hashes depend on these bytes).
		if format == "json" {
			return json.MarshalIndent(f, "", "  ")
		}
		return yaml.Marshal(f)
	}
	// The sparse form with every innermost list (an entry, a reward row, init) on one line.
	if format == "json" {
		out, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return nil, err
		}
		return innermostJSON.ReplaceAllFunc(out, func(b []byte) []byte {
			return bytes.ReplaceAll(bytes.Join(bytes.Fields(b), nil), []byte(","), []byte(", "))
		}), nil
	}
	var doc yaml.Node
	if err := doc.Encode(f); err != nil {
		return nil, err
	}
	flowInnermost(&doc)
	return yaml.Marshal(&doc)
}

// innermostJSON matches a list of numbers as json.MarshalIndent writes it, one number a line
// (never inside a string, which holds no raw newline).
var innermostJSON = regexp.MustCompile(`\[\n\s*[-+0-9.eE]+(,\n\s*[-+0-9.eE]+)*\n\s*\]`)

// flowInnermost sets the flow style ([a, b, c]) on every sequence of scalars under n.
func flowInnermost(n *yaml.Node) {
	if n.Kind == yaml.SequenceNode && len(n.Content) > 0 {
		flat := true
		for _, c := range n.Content {
			flat = flat && c.Kind == yaml.ScalarNode
		}
		if flat {
			n.Style = yaml.FlowStyle
			return
		}
	}
	for _, c := range n.Content {
		flowInnermost(c)
	}
}
