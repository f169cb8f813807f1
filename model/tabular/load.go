package tabular

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

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
//	init: [1, 0]               # d_1, length S
//	transitions:               # homogeneous: [S][A][S]; otherwise [H][S][A][S]
//	  - [[1, 0], [0.5, 0.5]]
//	  - [[0, 1], [0, 1]]
//	reward:                    # homogeneous: [S][A]; otherwise [H][S][A]; values in [0,1]
//	  - [0, 0.1]
//	  - [1, 0]
//	reward_map:                # optional, informational (RewardMap)
//	  scale: 0.01              # reward = scale·original + offset
//	  offset: 1
//	  min: -100                # the original table's smallest and largest reward
//	  max: -1
//
// Probabilities must be finite, non-negative and sum to 1 within 1e-9.
type File struct {
	Name        string    `json:"name,omitempty" yaml:"name,omitempty"`
	States      int       `json:"states" yaml:"states"`
	Actions     int       `json:"actions" yaml:"actions"`
	Horizon     int       `json:"horizon" yaml:"horizon"`
	Rewards     string    `json:"rewards,omitempty" yaml:"rewards,omitempty"`
	Homogeneous bool      `json:"homogeneous" yaml:"homogeneous"`
	Init        []float64 `json:"init" yaml:"init"`
	// Exactly one of the two shapes is used, according to Homogeneous.
	Transitions any `json:"transitions" yaml:"transitions"`
	Reward      any `json:"reward" yaml:"reward"`
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

// MaxEntries bounds H·S·A·S, the number of entries of the per-step transition tables that
// every tabular agent allocates for a run (counts N_h(s,a,s'), released counts, estimates;
// about five such float64 arrays per run, so ≈ 640 MiB per run at the limit). Files and Garnet
// configurations beyond it are refused before anything is allocated.
const MaxEntries = 1 << 24

// maxDim bounds each of S, A and H on its own (so that their products cannot overflow).
const maxDim = 1 << 16

// CheckSize checks S, A and H against their bounds ([1, 65536] each, and H·S·A·S ≤
// MaxEntries) without allocating anything; prefix is prepended to the field names (e.g.
// "garnet.").
func CheckSize(prefix string, S, A, H int) error {
	switch {
	case S < 1 || S > maxDim:
		return fmt.Errorf("%sstates: must be in [1, %d], got %d", prefix, maxDim, S)
	case A < 1 || A > maxDim:
		return fmt.Errorf("%sactions: must be in [1, %d], got %d", prefix, maxDim, A)
	case H < 1 || H > maxDim:
		return fmt.Errorf("%shorizon: must be in [1, %d], got %d", prefix, maxDim, H)
	}
	// Each factor is at most 2^16, so the product fits in 64 bits.
	if n := uint64(S) * uint64(A) * uint64(S) * uint64(H); n > MaxEntries {
		return fmt.Errorf("%sstates*actions*states*horizon = %d exceeds the limit 2^24 entries (%d·%d·%d·%d; every agent allocates tables of this size)", prefix, n, S, A, S, H)
	}
	return nil
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
	if err := CheckSize("", S, A, H); err != nil {
		return nil, err
	}
	m := &MDP{Name: f.Name, S: S, A: A, H: H, Init: f.Init}
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
	steps := H
	if f.Homogeneous {
		steps = 1
	}
	tr, err := numbers(f.Transitions, "transitions", shape(f.Homogeneous, H, S, A, S))
	if err != nil {
		return nil, err
	}
	rw, err := numbers(f.Reward, "reward", shape(f.Homogeneous, H, S, A))
	if err != nil {
		return nil, err
	}
	per, perR := S*A*S, S*A
	m.P, m.R = make([][]float64, H), make([][]float64, H)
	for h := 0; h < H; h++ {
		k := h
		if steps == 1 {
			k = 0
		}
		m.P[h], m.R[h] = tr[k*per:(k+1)*per], rw[k*perR:(k+1)*perR]
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

func shape(homogeneous bool, H int, dims ...int) []int {
	if homogeneous {
		return dims
	}
	return append([]int{H}, dims...)
}

// numbers flattens a nested list of the given shape, naming the offending index on error.
func numbers(v any, field string, dims []int) ([]float64, error) {
	if v == nil {
		return nil, fmt.Errorf("%s: missing", field)
	}
	size := 1
	for _, d := range dims {
		size *= d
	}
	out := make([]float64, 0, size)
	var walk func(v any, path string, depth int) error
	walk = func(v any, path string, depth int) error {
		if depth == len(dims) {
			x, ok := toFloat(v)
			if !ok {
				return fmt.Errorf("%s: want a number, got %v", path, v)
			}
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%s: want a finite number, got %v", path, x)
			}
			out = append(out, x)
			return nil
		}
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want a list of %d entries, got %T", path, dims[depth], v)
		}
		if len(list) != dims[depth] {
			return fmt.Errorf("%s: has %d entries, want %d", path, len(list), dims[depth])
		}
		for i, e := range list {
			if err := walk(e, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(v, field, 0); err != nil {
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

// Marshal encodes m in the File format (homogeneous when every step has the same table), as
// JSON when format is "json", else YAML.
func Marshal(m *MDP, format string) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	homog := true
	for h := 1; h < m.H; h++ {
		if !slices.Equal(m.P[h], m.P[0]) || !slices.Equal(m.R[h], m.R[0]) {
			homog = false
		}
	}
	f := File{Name: m.Name, States: m.S, Actions: m.A, Horizon: m.H, Rewards: m.Rewards.String(), Homogeneous: homog, Init: m.Init}
	table := func(h int) (any, any) {
		p := make([]any, m.S)
		r := make([]any, m.S)
		for s := 0; s < m.S; s++ {
			pa := make([]any, m.A)
			ra := make([]any, m.A)
			for a := 0; a < m.A; a++ {
				row := make([]any, m.S)
				for s2, x := range m.Trans(h, s, a) {
					row[s2] = x
				}
				pa[a] = row
				ra[a] = m.Reward(h, s, a)
			}
			p[s], r[s] = pa, ra
		}
		return p, r
	}
	if homog {
		f.Transitions, f.Reward = table(0)
	} else {
		ps, rs := make([]any, m.H), make([]any, m.H)
		for h := range ps {
			ps[h], rs[h] = table(h)
		}
		f.Transitions, f.Reward = ps, rs
	}
	if format == "json" {
		return json.MarshalIndent(f, "", "  ")
	}
	return yaml.Marshal(f)
}
