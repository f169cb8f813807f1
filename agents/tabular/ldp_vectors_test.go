package tabular

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"testing"

	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/agents/protocol"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/noise"
)

// This file holds the shared, language-neutral test vectors of practical-ldp's user-side
// randomiser (GaussianRandomizer): testdata/ldp_vectors.json. The Python package
// (python/dprl/ldp.py, python/tests/test_ldp_vectors.py) reproduces every vector from the same
// inputs; TestLDPVectors checks that Go does, bit for bit and byte for byte.
//
//	go test ./agents/tabular/ -run LDPVector -update   # rewrite testdata/ldp_vectors.json
//	go test ./agents/tabular/ -run LDPVector           # check it
//
// The noise is injected: a test-only noise.Source (replaySource) replays the listed standard
// normal draws z_i, one per coordinate in order, and returns x + float64(σ·z_i) — the product
// rounded to float64, then the sum rounded (two IEEE-754 roundings, never a fused
// multiply-add), which is what noise.Seeded's x + σ·NormFloat64() computes wherever the
// compiler does not fuse it (TestLDPVectorsReplayMatchesSeeded).

var updateLDPVectors = flag.Bool("update", false, "rewrite testdata/ldp_vectors.json")

const ldpVectorsPath = "testdata/ldp_vectors.json"

// replaySource is a test-only noise.Source: AddGaussian(x, σ) returns x + float64(σ·z) with z
// the next listed draw (σ = 0 returns x and consumes nothing, like every Source). With record
// set it draws z from r instead and appends it to z.
type replaySource struct {
	z      []float64
	next   int
	r      *rand.Rand // record mode
	excess int        // draws requested beyond the list
}

func (s *replaySource) AddGaussian(x, sigma float64) float64 {
	if sigma == 0 {
		return x
	}
	var z float64
	switch {
	case s.r != nil:
		z = s.r.NormFloat64()
		s.z = append(s.z, z)
	case s.next < len(s.z):
		z = s.z[s.next]
	default:
		s.excess++
		return math.NaN()
	}
	s.next++
	return x + float64(sigma*z) // explicit conversion: no fused multiply-add
}

func (s *replaySource) AddLaplace(float64, float64) float64 { panic("replaySource: no Laplace draws") }
func (s *replaySource) Secure() bool                        { return false }

// jfloat is a reward in the vector file: a JSON number, or one of the strings "NaN", "+Inf",
// "-Inf", "-0" for the values JSON numbers cannot carry exactly.
type jfloat float64

func (f jfloat) MarshalJSON() ([]byte, error) { return agentkit.FloatJSON(float64(f), true) }

func (f *jfloat) UnmarshalJSON(b []byte) error {
	if x, ok := agentkit.ParseSpecialFloatJSON(b, true); ok {
		*f = jfloat(x)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		return fmt.Errorf("reward: unknown special value %q", s)
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*f = jfloat(x)
	return nil
}

// ldpParams are the public parameters of the randomiser (PracticalPrivacy with S, A, H, K).
// Epsilon, Delta, Episodes and BatchEvery enter only σ's calibration (sigma_from "ledger").
type ldpParams struct {
	States       int     `json:"states"`
	Actions      int     `json:"actions"`
	Horizon      int     `json:"horizon"`
	Pool         bool    `json:"pool"`
	VisitCap     int     `json:"visit_cap"`
	RewardWeight float64 `json:"reward_weight"`
	BatchEvery   int     `json:"batch_every"`
	Epsilon      float64 `json:"epsilon"`
	Delta        float64 `json:"delta"`
	Episodes     int     `json:"episodes"`
	// NormBudget (0: the default 80) and PublicRewards (no reward block), omitted when zero.
	NormBudget    int  `json:"norm_budget,omitempty"`
	PublicRewards bool `json:"public_rewards,omitempty"`
	// Support is the public transition support (row s·A+a: the next states of (s, a),
	// increasing), omitted when not public (support.go).
	Support [][]int `json:"support,omitempty"`
}

type ldpTrajectory struct {
	States  []int    `json:"states"`
	Actions []int    `json:"actions"`
	Rewards []jfloat `json:"rewards"`
}

type ldpVector struct {
	Name  string `json:"name"`
	Note  string `json:"note"`
	Agent string `json:"agent"`
	// Params are the public parameters; SigmaFrom says where σ comes from: "ledger" (the
	// practical-ldp constructor's calibration from Params) or "given" (set directly, for codec
	// edge cases; Epsilon, Delta, Episodes, BatchEvery unused).
	Params      ldpParams       `json:"params"`
	SigmaFrom   string          `json:"sigma_from"`
	Sigma       float64         `json:"sigma"`
	Sensitivity float64         `json:"sensitivity"`
	Header      protocol.Header `json:"header"`
	Trajectory  ldpTrajectory   `json:"trajectory"`
	// Noise are the draws z_i, one per coordinate, in order (empty when Error is set).
	Noise        []float64 `json:"noise"`
	Contribution []float64 `json:"contribution,omitempty"`
	ReportValues []float64 `json:"report_values,omitempty"`
	ReportJSON   string    `json:"report_json,omitempty"`
	ReportBinary string    `json:"report_binary_hex,omitempty"`
	// Error is the randomiser's error for a refused trajectory (no report, no draw).
	Error string `json:"error,omitempty"`
}

type ldpVectorFile struct {
	Description string      `json:"description"`
	Regenerate  string      `json:"regenerate"`
	Layout      string      `json:"layout"`
	NoiseModel  string      `json:"noise_model"`
	Encodings   string      `json:"encodings"`
	Vectors     []ldpVector `json:"vectors"`
}

const (
	ldpDescription = "Test vectors of practical-ldp's user-side randomiser (agents/tabular GaussianRandomizer): " +
		"public parameters, a trajectory, the standard normal draws used, the contribution vector, the noisy report " +
		"and its two encodings (agents/protocol codec.go). Generated by agents/tabular/ldp_vectors_test.go; " +
		"checked by TestLDPVectors (Go) and python/tests/test_ldp_vectors.py (Python)."
	ldpRegenerate = "go test ./agents/tabular/ -run LDPVector -update"
	ldpLayout     = "contribution x has dim = G*S*A*(S+1) entries, G = 1 if pool else H. NT block first: for step h " +
		"(0-based) with i = s_h*A + a_h (+ h*S*A when not pooled), x[i*S + s_{h+1}] += 1; then the R block at offset " +
		"G*S*A*S: x[G*S*A*S + i] += w * clip(r_h), clip(r) = min(max(r, 0), 1) (+Inf -> 1, -Inf -> 0), w = reward_weight " +
		"(0 means 1), steps in order h = 0..H-1, each addition rounded to float64. Pooled: only the first m visits of " +
		"each (s,a) in the episode count (both blocks), m = visit_cap if 0 < visit_cap <= H else H; later visits are " +
		"skipped. Norm budget B = norm_budget (absent or 0 means 80): with c the visits kept so far, a visit of a pair " +
		"kept k times is kept only if sum c^2 + 2k + 1 <= B (pooled; then c(s,a) = k+1), and when B < M2 (M2 = the " +
		"largest sum c^2 without a budget: cap m, H steps, S*A cells, filled greedily) a repeat visit (k >= 1) only if " +
		"sum c^2 + 2k + 1 <= floor(B/2); a step only if sum c^2 + 1 <= B (not pooled); a pair dropped once stays dropped. public_rewards true: no R block (dim = G*S*A*S), rewards " +
		"neither checked nor read. support given (public support): the NT block has G*E entries, E the number of (s, a, s') in the " +
		"support, group g's block at g*E, (s, a, s') at the position of s' in the increasing rows of (s, a) taken in order of " +
		"s*A+a; the R block follows at G*E; a transition outside the support is refused (after the action and reward checks of " +
		"its step). Checks before anything, in this order (first failure wins): len(states) == H+1, len(actions) == H, " +
		"len(rewards) == H (else error 'trajectory: want H+1 states, H actions and H rewards'); every state in [0, S-1] " +
		"(h ascending); then for h ascending: action in [0, A-1], reward not NaN (unless public_rewards). The error " +
		"strings are in the vectors."
	ldpNoiseModel = "report value i = x_i + float64(sigma * z_i): the product sigma*z_i rounded to float64, then the sum " +
		"rounded (two IEEE-754 round-to-nearest-even operations, no fused multiply-add), z_i = noise[i], one draw per " +
		"coordinate in order, every coordinate (zero or not) gets one. sigma = 0 would add nothing and consume no draw. " +
		"This is Go's noise.Seeded AddGaussian (x + sigma*NormFloat64()) wherever the compiler does not fuse it into an " +
		"FMA (GOAMD64=v1/v2; arm64 and GOAMD64>=v3 may fuse). The draws of 'ledger' vectors are NormFloat64 samples; " +
		"those of 'given' vectors are arbitrary doubles chosen to exercise the encoders. reward_weight is a power of " +
		"two in every vector, so w*clip(r) is exact and fusion cannot change the contribution."
	ldpEncodings = "report_json is Go's encoding/json of protocol.Privatized {header, blocks: [report_values]} (shortest " +
		"round-trip floats, 'e' notation below 1e-6 and from 1e21 with the exponent's leading zero dropped, HTML-safe " +
		"string escapes). report_binary_hex is protocol.EncodeBinary: 'DPRL', byte 1 (schema), uvarint len + header JSON, " +
		"uvarint number of blocks (1), uvarint block length, the values as little-endian IEEE-754 float64."
)

// ldpSpec is one vector's inputs as the generator states them.
type ldpSpec struct {
	name, note, agent string
	params            ldpParams
	sigma             float64 // given σ; 0: from the ledger
	states, actions   []int
	rewards           []float64
	draws             []float64 // given draws (nil: NormFloat64 from the vector's seed)
}

func ldpPractical(S, A, H int) ldpParams {
	return ldpParams{States: S, Actions: A, Horizon: H, Pool: true, VisitCap: DefaultVisitCap, RewardWeight: DefaultRewardWeight,
		BatchEvery: DefaultBatchLDP, Epsilon: 1, Delta: 1e-5, Episodes: 1000}
}

func ldpSpecs() []ldpSpec {
	inf := math.Inf(1)
	codec := ldpParams{States: 3, Actions: 2, Horizon: 2, Pool: true, VisitCap: 1, RewardWeight: 1}
	// 24 coordinates; draws chosen so that x + z exercises Go's float formatting (σ = 1).
	codecDraws := []float64{0, 1e-6, 9.99e-7, 1e21, 999999999999999900000, -1e21, 1e-7, -2.5e-8,
		1e-300, 5e-324, -5e-324, 0.1, 123456.789, -0.5, 1e20, 1.5e300, 3, -7.25, 2.220446049250313e-16,
		0.30000000000000004, -1e-5, 65536, 1.7976931348623157e308, -0.000001}
	return []ldpSpec{
		{name: "riverswim-defaults", agent: "practical-ldp", params: ldpPractical(6, 2, 4),
			note:   "practical-ldp defaults (pooled, m = 4, w = 0.5) on RiverSwim's (S, A) at H = 4, rewards in [0, 1]",
			states: []int{0, 1, 1, 2, 1}, actions: []int{1, 1, 1, 0}, rewards: []float64{0.005, 0, 0.375, 1}},
		{name: "clip-out-of-range-rewards", agent: "practical-ldp", params: ldpPractical(4, 3, 9),
			note:   "rewards outside [0, 1] (negative, above 1, huge, tiny negative, +Inf, -Inf, -0) are clipped to [0, 1]",
			states: []int{0, 1, 2, 3, 0, 1, 2, 3, 0, 1}, actions: []int{0, 1, 2, 0, 1, 2, 0, 1, 2},
			rewards: []float64{-3.5, 2.25, 1e9, -1e-300, inf, -inf, math.Copysign(0, -1), 0.75, 1.0000000000000002}},
		{name: "visit-cap-2", agent: "practical-ldp",
			params: ldpParams{States: 3, Actions: 2, Horizon: 8, Pool: true, VisitCap: 2, RewardWeight: 0.5, BatchEvery: 10, Epsilon: 2, Delta: 1e-6, Episodes: 50},
			note:   "pooled with m = 2: the third and later visits of a pair are skipped in both blocks",
			states: []int{0, 0, 0, 0, 0, 1, 1, 1, 2}, actions: []int{1, 1, 1, 1, 0, 0, 0, 0},
			rewards: []float64{0.5, 0.25, 0.125, 1, 0.1, 0.2, 0.3, 0.4}},
		{name: "not-pooled", agent: "practical-ldp-plugin",
			params: ldpParams{States: 3, Actions: 2, Horizon: 3, Pool: false, VisitCap: 1, RewardWeight: 1, BatchEvery: 1, Epsilon: 0.5, Delta: 1e-5, Episodes: 10},
			note:   "step-dependent layout (pool false: G = H groups, the visit cap does not apply), w = 1",
			states: []int{2, 2, 2, 0}, actions: []int{1, 1, 0}, rewards: []float64{0.9, -1, 7}},
		{name: "cap-0-means-H", agent: "practical-ldp",
			params: ldpParams{States: 2, Actions: 2, Horizon: 5, Pool: true, VisitCap: 0, RewardWeight: 0.25, BatchEvery: 1000, Epsilon: 1, Delta: 1e-5, Episodes: 100000},
			note:   "visit_cap 0 keeps every visit (m = H); w = 0.25",
			states: []int{1, 1, 1, 1, 1, 0}, actions: []int{0, 0, 0, 0, 0}, rewards: []float64{0.1, 0.7, 0.3, 0.9, 1.5}},
		{name: "reward-weight-0-means-1", agent: "practical-ldp",
			params: ldpParams{States: 2, Actions: 1, Horizon: 2, Pool: true, VisitCap: 4, RewardWeight: 0, BatchEvery: 1, Epsilon: 10, Delta: 0.001, Episodes: 2},
			note:   "reward_weight 0 means w = 1",
			states: []int{0, 1, 1}, actions: []int{0, 0}, rewards: []float64{0.3, 0.6}},
		{name: "codec-float-formats", agent: "practical-ldp", params: codec, sigma: 1, draws: codecDraws,
			note:   "σ given (1) and arbitrary draws (not samples) so the report holds values that exercise the JSON float format (e/f notation boundaries, subnormals, extremes)",
			states: []int{0, 1, 2}, actions: []int{0, 1}, rewards: []float64{0.5, 0}},
		{name: "codec-header-escapes", agent: "practical-ldp <&> \"q\" \\ \n\t\b\f\x01 é \u2028\u2029 ✓", params: ldpParams{States: 1, Actions: 1, Horizon: 1, Pool: true, RewardWeight: 1}, sigma: 0.5,
			note:   "σ given; an agent name with every character class Go's JSON string encoder escapes (HTML-safe, control, U+2028/9, non-ASCII kept)",
			states: []int{0, 0}, actions: []int{0}, rewards: []float64{0.25}},
		{name: "error-short-trajectory", agent: "practical-ldp", params: ldpPractical(6, 2, 4),
			note:   "H states instead of H+1: refused before any draw",
			states: []int{0, 1, 1, 2}, actions: []int{1, 1, 1, 0}, rewards: []float64{0, 0, 0, 0}},
		{name: "error-state-out-of-range", agent: "practical-ldp", params: ldpPractical(6, 2, 4),
			note:   "a state equal to S is refused (states are checked before actions)",
			states: []int{0, 1, 6, 2, 1}, actions: []int{1, 1, 2, 0}, rewards: []float64{0, 0, 0, 0}},
		{name: "error-negative-state", agent: "practical-ldp", params: ldpPractical(6, 2, 4),
			note:   "a negative final state is refused",
			states: []int{0, 1, 2, 2, -1}, actions: []int{1, 1, 1, 0}, rewards: []float64{0, 0, 0, 0}},
		{name: "error-action-out-of-range", agent: "practical-ldp", params: ldpPractical(6, 2, 4),
			note:   "an action equal to A is refused",
			states: []int{0, 1, 2, 2, 1}, actions: []int{1, 1, 2, 0}, rewards: []float64{0, 0, 0, 0}},
		{name: "error-nan-reward", agent: "practical-ldp", params: ldpPractical(6, 2, 4),
			note:   "a NaN reward is refused (±Inf are clipped, NaN is not)",
			states: []int{0, 1, 2, 2, 1}, actions: []int{1, 1, 1, 0}, rewards: []float64{0, 0.5, math.NaN(), 0}},
		{name: "error-nan-after-bad-action", agent: "practical-ldp", params: ldpPractical(6, 2, 4),
			note:   "actions and rewards are checked step by step: the bad action at h = 1 is reported before the NaN at h = 2",
			states: []int{0, 1, 2, 2, 1}, actions: []int{1, -1, 1, 0}, rewards: []float64{0, 0.5, math.NaN(), 0}},
		budgetBlocks("norm-budget-default-binds", ldpPractical(3, 2, 30), 5,
			"defaults at H = 30 (M₂ = 96 > B = 80, repeats within 40): six pairs visited 5 times each in turn keep 4, 4, 2, 2, 1 "+
				"and 1 visits (sum c^2 = 42: a repeat that would take the sum above 40 is dropped, first visits go on up to 80)"),
		{name: "norm-budget-10", agent: "practical-ldp",
			params: ldpParams{States: 2, Actions: 2, Horizon: 8, Pool: true, VisitCap: 4, RewardWeight: 0.5, BatchEvery: 1, Epsilon: 1, Delta: 1e-5, Episodes: 10, NormBudget: 10},
			note:   "B = 10 < M2 = 32, repeats within 5: (0,0) kept twice (sum 4; a third would make 9 > 5), (1,0) once (sum 5), its repeat 8 > 5",
			states: []int{0, 0, 0, 0, 0, 1, 1, 1, 1}, actions: []int{0, 0, 0, 0, 0, 0, 0, 0},
			rewards: []float64{0.5, 0.25, 1, 0.75, 0.125, 0.5, 0.25, 1}},
		{name: "norm-budget-not-pooled", agent: "practical-ldp-plugin",
			params: ldpParams{States: 2, Actions: 2, Horizon: 5, Pool: false, VisitCap: 4, RewardWeight: 1, BatchEvery: 1, Epsilon: 1, Delta: 1e-5, Episodes: 10, NormBudget: 3},
			note:   "step-dependent with B = 3: the first three steps are kept, the rest dropped",
			states: []int{0, 1, 0, 1, 0, 1}, actions: []int{0, 1, 1, 0, 0}, rewards: []float64{0.5, 1, 0.25, 1, 1}},
		{name: "public-rewards", agent: "practical-ldp",
			params: ldpParams{States: 6, Actions: 2, Horizon: 6, Pool: true, VisitCap: 4, RewardWeight: 0.5, BatchEvery: 1000, Epsilon: 1, Delta: 1e-5, Episodes: 1000, PublicRewards: true},
			note:   "public rewards: no R block (dim = S*A*S), the rewards (here out of range and NaN) are neither checked nor read",
			states: []int{0, 1, 1, 2, 3, 3, 4}, actions: []int{1, 1, 0, 1, 1, 0}, rewards: []float64{0.25, math.NaN(), 7, -1, math.Inf(1), 0}},
		func() ldpSpec {
			s := budgetBlocks("public-rewards-budget-binds", ldpPractical(4, 2, 40), 5,
				"public rewards and the default budget at H = 40 (M₂ = 128 > 80, repeats within 40): eight pairs keep 4, 4, 2, 2, 1, 1, 1 and 1 visits; no R block")
			s.params.PublicRewards = true
			return s
		}(),
		{name: "public-support", agent: "practical-ldp",
			params: ldpParams{States: 3, Actions: 2, Horizon: 6, Pool: true, VisitCap: 2, RewardWeight: 0.5, BatchEvery: 10, Epsilon: 1, Delta: 1e-5, Episodes: 100, Support: [][]int{{0, 1}, {2}, {0, 2}, {1}, {0, 1, 2}, {2}}},
			note:   "public support of E = 10 entries: the NT block has 10 coordinates (then the R block of S*A), the third visit of (0,0) is capped",
			states: []int{0, 0, 1, 0, 0, 1, 0}, actions: []int{0, 0, 0, 0, 0, 0}, rewards: []float64{0.25, 0.5, 1, 0, 0.75, 0.125}},
		{name: "public-support-not-pooled", agent: "practical-ldp-plugin",
			params: ldpParams{States: 3, Actions: 2, Horizon: 3, Pool: false, VisitCap: 1, RewardWeight: 1, BatchEvery: 1, Epsilon: 0.5, Delta: 1e-5, Episodes: 10, PublicRewards: true, Support: [][]int{{0, 1}, {2}, {0, 2}, {1}, {0, 1, 2}, {2}}},
			note:   "public support and public rewards, step-dependent: G = H groups of E = 10 coordinates, no R block",
			states: []int{2, 2, 0, 1}, actions: []int{1, 0, 0}, rewards: []float64{0, 0, 0}},
		{name: "error-outside-public-support", agent: "practical-ldp",
			params: ldpParams{States: 3, Actions: 2, Horizon: 3, Pool: true, VisitCap: 2, RewardWeight: 0.5, BatchEvery: 1, Epsilon: 1, Delta: 1e-5, Episodes: 10, Support: [][]int{{0, 1}, {2}, {0, 2}, {1}, {0, 1, 2}, {2}}},
			note:   "a transition outside the public support ((0,1) -> 0) is refused before any draw",
			states: []int{0, 1, 0, 0}, actions: []int{0, 0, 1}, rewards: []float64{0, 0, 0}},
	}
}

// budgetBlocks is a vector of the pooled layout p whose episode visits the pairs (s, a) in
// order, each `each` times in a row (H/each pairs, next state = the next pair's state).
func budgetBlocks(name string, p ldpParams, each int, note string) ldpSpec {
	H := p.Horizon
	sp := ldpSpec{name: name, agent: "practical-ldp", params: p, note: note, states: make([]int, H+1), actions: make([]int, H), rewards: make([]float64, H)}
	for h := 0; h < H; h++ {
		cell := h / each % (p.States * p.Actions)
		sp.states[h], sp.actions[h], sp.rewards[h] = cell/p.Actions, cell%p.Actions, float64(h%4)/4
	}
	sp.states[H] = 0
	return sp
}

func (p ldpParams) privacy() PracticalPrivacy {
	return PracticalPrivacy{Model: LDP, Epsilon: p.Epsilon, Delta: p.Delta, Pool: p.Pool, VisitCap: p.VisitCap,
		BatchEvery: p.BatchEvery, RewardWeight: p.RewardWeight, NormBudget: p.NormBudget, PublicRewards: p.PublicRewards,
		PublicSupport: p.Support != nil}
}

// ldpRandomizer builds the randomiser of a vector: through the practical-ldp constructor (σ
// from the ledger) when sigma is 0, else directly with the given σ.
func ldpRandomizer(p ldpParams, sigma float64, src *replaySource) (*GaussianRandomizer, error) {
	pp := p.privacy()
	sup, err := newSupport("params", p.States, p.Actions, pp.PublicSupport, p.Support, terminal{})
	if err != nil {
		return nil, err
	}
	if sigma == 0 {
		if err := pp.Validate(); err != nil {
			return nil, err
		}
		z, _, _, err := newPracticalLocal(p.States, p.Actions, p.Horizon, p.Episodes, pp, sup, src)
		return z, err
	}
	enc := newContribution(p.States, p.Actions, p.Horizon, pp, sup)
	return &GaussianRandomizer{enc: enc, sigma: sigma, src: src, rep: GaussianReport{x: make([]float64, enc.dim())}}, nil
}

// runLDPSpec computes the vector of spec with the noise of src.
func runLDPSpec(spec ldpSpec, src *replaySource) (ldpVector, error) {
	p := spec.params
	v := ldpVector{Name: spec.name, Note: spec.note, Agent: spec.agent, Params: p, SigmaFrom: "ledger",
		Sensitivity: PracticalSensitivity(p.States, p.Actions, p.Horizon, p.privacy()), Noise: []float64{}}
	if spec.sigma != 0 {
		v.SigmaFrom = "given"
	}
	v.Trajectory = ldpTrajectory{States: spec.states, Actions: spec.actions, Rewards: make([]jfloat, len(spec.rewards))}
	for i, r := range spec.rewards {
		v.Trajectory.Rewards[i] = jfloat(r)
	}
	z, err := ldpRandomizer(p, spec.sigma, src)
	if err != nil {
		return v, err
	}
	v.Sigma = z.sigma
	v.Header = tabHeader(spec.agent, protocol.KindPrivatized, p.States, p.Actions, p.Horizon, terminal{}, []int{z.enc.dim()})
	t := &model.Trajectory{S: spec.states, A: spec.actions, R: spec.rewards}
	x := make([]float64, z.enc.dim())
	if err := z.enc.add(t, x); err != nil {
		v.Error = err.Error()
		if _, err2 := z.Randomize(t); err2 == nil || err2.Error() != v.Error {
			return v, fmt.Errorf("Randomize error %v differs from the encoder's %q", err2, v.Error)
		}
		if src.next != 0 {
			return v, fmt.Errorf("a refused trajectory consumed %d draws", src.next)
		}
		return v, nil
	}
	v.Contribution = x
	rep, err := z.Randomize(t)
	if err != nil {
		return v, err
	}
	v.ReportValues = rep.Values()
	v.Noise = append([]float64{}, src.z[:src.next]...)
	msg := &protocol.Privatized{Header: v.Header, Blocks: [][]float64{rep.Values()}}
	js, err := protocol.EncodeJSON(msg)
	if err != nil {
		return v, err
	}
	bin, err := protocol.EncodeBinary(msg)
	if err != nil {
		return v, err
	}
	// The encodings decode to the same report, bit for bit.
	for _, enc := range [][]byte{js, bin} {
		back, err := protocol.Decode(enc, v.Header)
		if err != nil {
			return v, fmt.Errorf("decode: %w", err)
		}
		if got := back.(*protocol.Privatized).Blocks[0]; !sameBits(got, v.ReportValues) {
			return v, errors.New("decoded report differs from the encoded one")
		}
	}
	v.ReportJSON, v.ReportBinary = string(js), hex.EncodeToString(bin)
	return v, nil
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func encodeLDPVectors(f ldpVectorFile) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func ldpHeaderFile() ldpVectorFile {
	return ldpVectorFile{Description: ldpDescription, Regenerate: ldpRegenerate, Layout: ldpLayout, NoiseModel: ldpNoiseModel, Encodings: ldpEncodings}
}

// TestLDPVectors checks (or, with -update, writes) testdata/ldp_vectors.json: for every
// vector Go's randomiser, fed the listed draws, reproduces σ, the sensitivity, the header, the
// contribution, the noisy values (bit for bit), the JSON report and the binary report (byte for
// byte), or the listed error; and the file is exactly what the generator writes.
func TestLDPVectors(t *testing.T) {
	specs := ldpSpecs()
	if *updateLDPVectors {
		f := ldpHeaderFile()
		for i, spec := range specs {
			src := &replaySource{z: spec.draws}
			if spec.draws == nil {
				src = &replaySource{r: rand.New(rand.NewPCG(uint64(i+1), 0x1d5eed))}
			}
			v, err := runLDPSpec(spec, src)
			if err != nil {
				t.Fatalf("vector %s: %v", spec.name, err)
			}
			if v.Error == "" && src.next != len(src.z) {
				t.Fatalf("vector %s: %d draws given, %d used", spec.name, len(src.z), src.next)
			}
			f.Vectors = append(f.Vectors, v)
		}
		data, err := encodeLDPVectors(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(ldpVectorsPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d vectors)", ldpVectorsPath, len(f.Vectors))
		return
	}
	data, err := os.ReadFile(ldpVectorsPath)
	if err != nil {
		t.Fatalf("%v (regenerate: %s)", err, ldpRegenerate)
	}
	var file ldpVectorFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		t.Fatalf("%s: %v", ldpVectorsPath, err)
	}
	if len(file.Vectors) != len(specs) {
		t.Fatalf("%s has %d vectors, the generator %d (regenerate: %s)", ldpVectorsPath, len(file.Vectors), len(specs), ldpRegenerate)
	}
	regen := ldpHeaderFile()
	for i, want := range file.Vectors {
		spec := specs[i]
		t.Run(want.Name, func(t *testing.T) {
			if want.Name != spec.name {
				t.Fatalf("vector %d is %q in the file, %q in the generator", i, want.Name, spec.name)
			}
			src := &replaySource{z: append([]float64(nil), want.Noise...)}
			if spec.draws != nil && !sameBits(spec.draws, want.Noise) {
				t.Fatalf("the file's draws differ from the generator's")
			}
			got, err := runLDPSpec(spec, src)
			if err != nil {
				t.Fatal(err)
			}
			regen.Vectors = append(regen.Vectors, got)
			if src.excess > 0 || (want.Error == "" && src.next != len(want.Noise)) {
				t.Fatalf("the randomiser used %d draws (+%d beyond the list), the file lists %d", src.next, src.excess, len(want.Noise))
			}
			checkLDPVector(t, got, want)
		})
	}
	if t.Failed() {
		return
	}
	out, err := encodeLDPVectors(regen)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, data) {
		t.Errorf("%s is not what the generator writes from its own draws (regenerate: %s)", ldpVectorsPath, ldpRegenerate)
	}
}

func checkLDPVector(t *testing.T, got, want ldpVector) {
	t.Helper()
	bits := func(x float64) string { return strconv.FormatUint(math.Float64bits(x), 16) }
	if !reflect.DeepEqual(got.Params, want.Params) || got.Agent != want.Agent || got.SigmaFrom != want.SigmaFrom {
		t.Errorf("inputs differ: got %+v %q %q, file %+v %q %q", got.Params, got.Agent, got.SigmaFrom, want.Params, want.Agent, want.SigmaFrom)
	}
	if !reflect.DeepEqual(got.Trajectory.States, want.Trajectory.States) || !reflect.DeepEqual(got.Trajectory.Actions, want.Trajectory.Actions) {
		t.Errorf("trajectory differs from the generator's")
	}
	gr, wr := make([]float64, len(got.Trajectory.Rewards)), make([]float64, len(want.Trajectory.Rewards))
	for i := range gr {
		gr[i] = float64(got.Trajectory.Rewards[i])
	}
	for i := range wr {
		wr[i] = float64(want.Trajectory.Rewards[i])
	}
	if !sameBits(gr, wr) {
		t.Errorf("rewards differ: got %v, file %v", gr, wr)
	}
	if math.Float64bits(got.Sigma) != math.Float64bits(want.Sigma) {
		t.Errorf("sigma: got %v (bits %s), file %v (bits %s): the practical-ldp calibration changed? (regenerate: %s)", got.Sigma, bits(got.Sigma), want.Sigma, bits(want.Sigma), ldpRegenerate)
	}
	if math.Float64bits(got.Sensitivity) != math.Float64bits(want.Sensitivity) {
		t.Errorf("sensitivity: got %v, file %v", got.Sensitivity, want.Sensitivity)
	}
	if !reflect.DeepEqual(got.Header, want.Header) {
		t.Errorf("header: got %+v, file %+v", got.Header, want.Header)
	}
	if got.Error != want.Error {
		t.Fatalf("error: got %q, file %q", got.Error, want.Error)
	}
	for _, c := range []struct {
		name      string
		got, want []float64
	}{{"contribution", got.Contribution, want.Contribution}, {"report_values", got.ReportValues, want.ReportValues}} {
		if len(c.got) != len(c.want) {
			t.Errorf("%s: got %d values, file %d", c.name, len(c.got), len(c.want))
			continue
		}
		for i := range c.got {
			if math.Float64bits(c.got[i]) != math.Float64bits(c.want[i]) {
				t.Errorf("%s[%d]: got %v (bits %s), file %v (bits %s)", c.name, i, c.got[i], bits(c.got[i]), c.want[i], bits(c.want[i]))
			}
		}
	}
	if got.ReportJSON != want.ReportJSON {
		t.Errorf("report_json:\n got %s\nfile %s", got.ReportJSON, want.ReportJSON)
	}
	if got.ReportBinary != want.ReportBinary {
		t.Errorf("report_binary_hex:\n got %s\nfile %s", got.ReportBinary, want.ReportBinary)
	}
}

//go:noinline
func ldpFusedMulAdd(x, y, z float64) float64 { return x + y*z }

// TestLDPVectorsReplayMatchesSeeded checks the noise model the vectors state: Go's
// noise.Seeded source gives, bit for bit, x + float64(σ·z) with z its NormFloat64 draws (the
// replay source's formula), so the vectors describe the real randomiser. Skipped where the
// compiler fuses x + y·z into an FMA (arm64, GOAMD64 ≥ v3): there Seeded rounds once, and the
// vectors (two roundings) remain the reference.
func TestLDPVectorsReplayMatchesSeeded(t *testing.T) {
	y := 1 + math.Ldexp(1, -30)
	if ldpFusedMulAdd(-1, y, 1-math.Ldexp(1, -30)) != 0 {
		t.Skipf("the compiler fuses x + y*z into an FMA on %s: noise.Seeded rounds once there", runtime.GOARCH)
	}
	p := ldpPractical(6, 2, 4)
	traj := &model.Trajectory{S: []int{0, 1, 1, 2, 1}, A: []int{1, 1, 1, 0}, R: []float64{0.005, 0, 0.375, 1}}
	seed := rand.New(rand.NewPCG(7, 8))
	rec := &replaySource{r: rand.New(rand.NewPCG(7, 8))}
	zs, _, _, err := newPracticalLocal(6, 2, 4, p.Episodes, p.privacy(), nil, noise.NewSeeded(seed))
	if err != nil {
		t.Fatal(err)
	}
	zr, _, _, err := newPracticalLocal(6, 2, 4, p.Episodes, p.privacy(), nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 50; k++ {
		a, err := zs.Randomize(traj)
		if err != nil {
			t.Fatal(err)
		}
		b, err := zr.Randomize(traj)
		if err != nil {
			t.Fatal(err)
		}
		if !sameBits(a.Values(), b.Values()) {
			t.Fatalf("report %d: noise.Seeded differs from x + float64(σ·z)", k)
		}
	}
}

// TestLDPVectorsFileIsJSON keeps the vector file readable by any JSON parser: no NaN or
// infinity literal (special rewards are strings), and it parses as generic JSON.
func TestLDPVectorsFileIsJSON(t *testing.T) {
	data, err := os.ReadFile(filepath.Clean(ldpVectorsPath))
	if err != nil {
		t.Skipf("%v", err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
}
