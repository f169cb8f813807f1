// Package protocol is the one contract every agent of every family follows (issue 17 item 2),
// with the trust boundary in its types. It is what a network service (`dprl serve`) exposes.
//
// Users arrive one per episode and a user's episode is her private data. An agent is split in
// two sides and one message between them:
//
//   - a Curator (the server) holds the private statistics and publishes a versioned Policy
//     computed only from the statistics it has released (and public randomness);
//   - a User (the client) plays one episode with a published policy on her environment and
//     turns it into one Report: under joint DP (and for the non-private twins) her raw data for
//     the trusted curator (kind trajectory), under local DP a report she privatised herself
//     from a noise stream the curator does not hold (kind privatized);
//   - the Report is a serialisable message with a self-describing Header (schema version,
//     family, agent, kind, dimensions), a stable JSON encoding and a compact binary one
//     (codec.go), validated where it enters: Curator.Receive checks it against the curator's
//     public dimensions (sizes, finiteness, ranges) before any state changes, and the agent
//     then applies exactly the clipping its sensitivity proof assumes.
//
// The trust boundary is in the types: an LDP curator is an LDPCurator, whose Receive takes a
// *Privatized and nothing else, so handing it a raw *Trajectory, *Leaves or *Path does not
// compile; and Decode refuses a report whose header says kind trajectory for a curator that
// expects privatized reports (the only way bytes from the network become a report).
//
// Run (loop.go) is the one episode loop of every family: the experiment runners and the
// agents' own run helpers (agents/linmdp.Run, agents/lq.Run, RunPractical) drive agents
// through it; linmix's Agent.Episode, which its audits use to feed neighbouring users, is one
// step of the same contract.
//
// This package imports no model, agent or experiment package (only internal/strictdecode);
// the families implement the contract in their own packages (agents/<family>/protocol.go), and
// the runners give Run the users' streams from engine.Streams.Episodes.
package protocol

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// SchemaVersion is the version of the Report message (its JSON and binary encodings). A
// decoder refuses any other version.
const SchemaVersion = 1

// Family is a model class.
type Family string

// The four families.
const (
	Tabular Family = "tabular"
	LinMDP  Family = "linmdp"
	LinMix  Family = "linmix"
	LQ      Family = "lq"
)

// Kind says which side of the trust boundary a report's content comes from.
type Kind string

const (
	// KindTrajectory is a user's raw data for a trusted curator (JDP agents and the
	// non-private twins): her trajectory (tabular, linmdp, lq) or the raw regression leaves
	// she computed from it (linmix).
	KindTrajectory Kind = "trajectory"
	// KindPrivatized is a report the user privatised herself (LDP agents); the only kind an
	// LDP curator accepts.
	KindPrivatized Kind = "privatized"
)

// Dims are a curator's public dimensions. Every report to it must have exactly these (a
// field that does not apply to the family is 0 or empty and omitted from the JSON).
type Dims struct {
	// Horizon is H.
	Horizon int `json:"horizon"`
	// States and Actions are the sizes of a finite state and action space (tabular, linmdp).
	States  int `json:"states,omitempty"`
	Actions int `json:"actions,omitempty"`
	// StateDim and InputDim are the LQ dimensions n and d.
	StateDim int `json:"state_dim,omitempty"`
	InputDim int `json:"input_dim,omitempty"`
	// Steps is the largest number of steps a linmix Leaves report may carry (H for the papers'
	// agents, H − 1 for practical-vtr: the sensitivity counts that many leaves).
	Steps int `json:"steps,omitempty"`
	// Regressors are the dimensions of the regressors of each regression of a linmix step.
	Regressors []int `json:"regressors,omitempty"`
	// Blocks are the lengths of the blocks of a Privatized report.
	Blocks []int `json:"blocks,omitempty"`
	// Terminal are the terminal states of a finite MDP (tabular), increasing: public
	// structure. Entering one ends the episode, so a Trajectory may be shorter than Horizon
	// exactly when its last state is terminal (Trajectory.Validate). Empty: every episode
	// has Horizon steps. Only the headers of trajectory reports list them (a privatised
	// report's blocks have the same layout whatever the episode's length).
	Terminal []int `json:"terminal,omitempty"`
}

// IsTerminal reports whether s is one of the terminal states d.Terminal (binary search:
// Terminal is increasing).
func (d Dims) IsTerminal(s int) bool {
	_, ok := slices.BinarySearch(d.Terminal, s)
	return ok
}

// Header describes a report: everything a receiver needs to check it before reading it.
type Header struct {
	// Schema is SchemaVersion.
	Schema int `json:"schema"`
	// Family, Agent and Kind name the agent the report is for and its kind.
	Family Family `json:"family"`
	Agent  string `json:"agent"`
	Kind   Kind   `json:"kind"`
	// Dims are the curator's public dimensions.
	Dims Dims `json:"dims"`
}

// Check returns nil if h is the header want, else an error naming the first field that
// differs. A curator that expects privatized reports refuses kind trajectory with an error
// that says so.
func (h Header) Check(want Header) error {
	switch {
	case h.Schema != want.Schema:
		return fieldf("header.schema", "got %d, want %d", h.Schema, want.Schema)
	case h.Family != want.Family:
		return fieldf("header.family", "got %q, want %q", h.Family, want.Family)
	case h.Agent != want.Agent:
		return fieldf("header.agent", "got %q, want %q", h.Agent, want.Agent)
	case h.Kind != want.Kind:
		if want.Kind == KindPrivatized {
			return fieldf("header.kind", "agent %s is locally private: its curator accepts only privatized reports, got kind %q (raw data never leaves the user)", want.Agent, h.Kind)
		}
		return fieldf("header.kind", "got %q, want %q", h.Kind, want.Kind)
	}
	a, b := h.Dims, want.Dims
	for _, f := range []struct {
		name     string
		got, exp int
	}{{"horizon", a.Horizon, b.Horizon}, {"states", a.States, b.States}, {"actions", a.Actions, b.Actions},
		{"state_dim", a.StateDim, b.StateDim}, {"input_dim", a.InputDim, b.InputDim}, {"steps", a.Steps, b.Steps}} {
		if f.got != f.exp {
			return fieldf("header.dims."+f.name, "got %d, want %d", f.got, f.exp)
		}
	}
	if err := sameInts("header.dims.regressors", a.Regressors, b.Regressors); err != nil {
		return err
	}
	if err := sameInts("header.dims.terminal", a.Terminal, b.Terminal); err != nil {
		return err
	}
	return sameInts("header.dims.blocks", a.Blocks, b.Blocks)
}

func sameInts(field string, got, want []int) error {
	if len(got) != len(want) {
		return fieldf(field, "got %d entries, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fieldf(fmt.Sprintf("%s[%d]", field, i), "got %d, want %d", got[i], want[i])
		}
	}
	return nil
}

// Report is the one message a user sends to a curator. It is one of *Trajectory, *Leaves,
// *Path (kind trajectory) or *Privatized (kind privatized); the set is closed.
type Report interface {
	// Head returns the report's header.
	Head() Header
	// Validate checks the report against the curator's header want: the header, every size
	// against the public dimensions, finiteness of every number and the ranges of states and
	// actions. The error names the field.
	Validate(want Header) error
	report()
}

// Trajectory is a user's raw episode of a finite MDP (tabular, linmdp): kind trajectory.
type Trajectory struct {
	Header Header `json:"header"`
	// States are s_1..s_{L+1} (in [0, States)), Actions a_1..a_L (in [0, Actions)), Rewards
	// r_1..r_L (finite; the agent clips them to [0, 1] as its proof assumes), L the number of
	// steps played: L = H, or L < H when the episode ended on entering the terminal state
	// s_{L+1} (Dims.Terminal; no earlier state is terminal).
	States  []int     `json:"states"`
	Actions []int     `json:"actions"`
	Rewards []float64 `json:"rewards"`
}

// Leaves are a linear-mixture user's raw regression data, computed on her side from her
// trajectory and the published values (kind trajectory): for step h and regression r the
// regressor X[h][r] and the target Y[h][r]. The curator projects and clips them (its guard)
// as the sensitivity proof assumes.
type Leaves struct {
	Header Header        `json:"header"`
	X      [][][]float64 `json:"x"`
	Y      [][]float64   `json:"y"`
}

// Path is a user's raw LQ episode (kind trajectory): states x_1..x_{H+1} (StateDim each) and
// inputs u_1..u_H (InputDim each). The curator scales each pair as its sensitivity assumes.
type Path struct {
	Header Header      `json:"header"`
	States [][]float64 `json:"states"`
	Inputs [][]float64 `json:"inputs"`
}

// Privatized is a report the user privatised herself (kind privatized): blocks of noisy
// numbers, Dims.Blocks long, the agent's layout (the block names are in its doc comment). It
// holds no state, action, reward or regressor: nothing of a raw trajectory fits in it.
type Privatized struct {
	Header Header      `json:"header"`
	Blocks [][]float64 `json:"blocks"`
}

// Head implements Report.
func (r *Trajectory) Head() Header { return r.Header }

// Head implements Report.
func (r *Leaves) Head() Header { return r.Header }

// Head implements Report.
func (r *Path) Head() Header { return r.Header }

// Head implements Report.
func (r *Privatized) Head() Header { return r.Header }

func (*Trajectory) report() {}
func (*Leaves) report()     {}
func (*Path) report()       {}
func (*Privatized) report() {}

// Validate implements Report. Without terminal states (Dims.Terminal empty) a trajectory
// has exactly H steps. With them it has L ∈ [1, H] steps (L actions and rewards, L+1
// states): no state before the last is terminal (the episode would have ended there), and a
// trajectory shorter than H ends in a terminal state (only entering one ends an episode).
func (r *Trajectory) Validate(want Header) error {
	if err := validHead(r, want); err != nil {
		return err
	}
	d := want.Dims
	H := d.Horizon
	L := len(r.Actions)
	if len(d.Terminal) == 0 {
		if len(r.States) != H+1 {
			return fieldf("states", "got %d states, want H+1 = %d", len(r.States), H+1)
		}
		if L != H {
			return fieldf("actions", "got %d actions, want H = %d", L, H)
		}
		if len(r.Rewards) != H {
			return fieldf("rewards", "got %d rewards, want H = %d", len(r.Rewards), H)
		}
	} else {
		if L < 1 || L > H {
			return fieldf("actions", "got %d actions, want L in [1, H = %d] (the steps played)", L, H)
		}
		if len(r.States) != L+1 {
			return fieldf("states", "got %d states, want L+1 = %d (%d actions)", len(r.States), L+1, L)
		}
		if len(r.Rewards) != L {
			return fieldf("rewards", "got %d rewards, want L = %d (one per action)", len(r.Rewards), L)
		}
	}
	for h, s := range r.States {
		if s < 0 || s >= d.States {
			return fieldf(fmt.Sprintf("states[%d]", h), "state must be in [0, %d], got %d", d.States-1, s)
		}
	}
	if len(d.Terminal) > 0 {
		for h, s := range r.States[:L] {
			if d.IsTerminal(s) {
				return fieldf(fmt.Sprintf("states[%d]", h), "state %d is terminal but the episode goes on", s)
			}
		}
		if s := r.States[L]; L < H && !d.IsTerminal(s) {
			return fieldf("states", "%d steps end in non-terminal state %d (an episode shorter than H = %d must end in a terminal state)", L, s, H)
		}
	}
	for h, a := range r.Actions {
		if a < 0 || a >= d.Actions {
			return fieldf(fmt.Sprintf("actions[%d]", h), "action must be in [0, %d], got %d", d.Actions-1, a)
		}
	}
	return finite("rewards", r.Rewards)
}

// Validate implements Report. A report may carry fewer steps than Dims.Steps (an agent that
// needs exactly H says so in its own check), never more.
func (r *Leaves) Validate(want Header) error {
	if err := validHead(r, want); err != nil {
		return err
	}
	d := want.Dims
	if len(r.X) > d.Steps {
		return fieldf("x", "got %d steps of leaves, at most %d (the sensitivity counts %d leaves per user)", len(r.X), d.Steps, d.Steps)
	}
	if len(r.Y) != len(r.X) {
		return fieldf("y", "got %d steps, want %d (as x)", len(r.Y), len(r.X))
	}
	for h := range r.X {
		if len(r.X[h]) != len(d.Regressors) {
			return fieldf(fmt.Sprintf("x[%d]", h), "got %d regressions, want %d", len(r.X[h]), len(d.Regressors))
		}
		if len(r.Y[h]) != len(d.Regressors) {
			return fieldf(fmt.Sprintf("y[%d]", h), "got %d targets, want %d", len(r.Y[h]), len(d.Regressors))
		}
		for k, x := range r.X[h] {
			// Field names are formatted only on error: this runs once per user.
			if len(x) != d.Regressors[k] {
				return fieldf(fmt.Sprintf("x[%d][%d]", h, k), "got dimension %d, want %d", len(x), d.Regressors[k])
			}
			if !allFinite(x) {
				return finite(fmt.Sprintf("x[%d][%d]", h, k), x)
			}
		}
		if !allFinite(r.Y[h]) {
			return finite(fmt.Sprintf("y[%d]", h), r.Y[h])
		}
	}
	return nil
}

// Validate implements Report.
func (r *Path) Validate(want Header) error {
	if err := validHead(r, want); err != nil {
		return err
	}
	d := want.Dims
	if len(r.States) != d.Horizon+1 {
		return fieldf("states", "got %d states, want H+1 = %d", len(r.States), d.Horizon+1)
	}
	if len(r.Inputs) != d.Horizon {
		return fieldf("inputs", "got %d inputs, want H = %d", len(r.Inputs), d.Horizon)
	}
	for h, x := range r.States {
		if len(x) != d.StateDim {
			return fieldf(fmt.Sprintf("states[%d]", h), "got dimension %d, want %d", len(x), d.StateDim)
		}
		if !allFinite(x) {
			return finite(fmt.Sprintf("states[%d]", h), x)
		}
	}
	for h, u := range r.Inputs {
		if len(u) != d.InputDim {
			return fieldf(fmt.Sprintf("inputs[%d]", h), "got dimension %d, want %d", len(u), d.InputDim)
		}
		if !allFinite(u) {
			return finite(fmt.Sprintf("inputs[%d]", h), u)
		}
	}
	return nil
}

// Validate implements Report.
func (r *Privatized) Validate(want Header) error {
	if err := validHead(r, want); err != nil {
		return err
	}
	if len(r.Blocks) != len(want.Dims.Blocks) {
		return fieldf("blocks", "got %d blocks, want %d", len(r.Blocks), len(want.Dims.Blocks))
	}
	for i, b := range r.Blocks {
		if len(b) != want.Dims.Blocks[i] {
			return fieldf(fmt.Sprintf("blocks[%d]", i), "got %d values, want %d", len(b), want.Dims.Blocks[i])
		}
		if !allFinite(b) {
			return finite(fmt.Sprintf("blocks[%d]", i), b)
		}
	}
	return nil
}

// validHead checks what every report must have: presence (r non-nil) and the header want.
func validHead[T any, P interface {
	*T
	Report
}](r P, want Header) error {
	if r == nil {
		return fieldf("report", "missing")
	}
	return r.Head().Check(want)
}

// allFinite reports whether xs holds no NaN or ±Inf (x − x is 0 exactly for finite x).
func allFinite(xs []float64) bool {
	for _, x := range xs {
		if x-x != 0 {
			return false
		}
	}
	return true
}

// finite returns an error naming field[i] for the first NaN or ±Inf of xs.
func finite(field string, xs []float64) error {
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fieldf(fmt.Sprintf("%s[%d]", field, i), "not a finite number (%g)", x)
		}
	}
	return nil
}

// FieldError is a refused report: Field names the offending field (header.kind, states[3],
// x[2][0][1], blocks[0][17], …).
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return "report." + e.Field + ": " + e.Msg }

func fieldf(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Policy is what a curator publishes before an episode: a decision rule and its version.
type Policy[T any] struct {
	// Version identifies the published rule: it changes exactly when the rule changes, that
	// is when it differs from the previously published one. A rule is computed only from
	// released statistics and public randomness, so it changes only after a release, or for
	// planners that draw public randomness for every user (posterior sampling, the linear
	// mixture planners' random tie-breaks) when that draw changes it. Clients cache by it; the
	// loop evaluates a rule's exact regret only when it changes.
	Version uint64
	// Rule is the family's decision rule (agents/<family>/protocol.go). It is owned by the
	// curator and valid until the next Publish or Receive.
	Rule T
}

// Curator is the server side of an agent: it holds the private statistics. R is the report
// type it accepts: *Trajectory, *Leaves or *Path for a trusted curator (JDP, non-private),
// *Privatized for an LDP curator (see LDPCurator).
type Curator[T any, R Report] interface {
	// Expect returns the header every report to this curator must carry (public).
	Expect() Header
	// Capacity is the number of reports the calibration admits (K − 1 when episode K's data
	// would reach no one, K for the agents that ingest it). Receive refuses more.
	Capacity() int
	// Publish returns the policy for the next user, computed from released statistics only.
	Publish() (Policy[T], error)
	// Receive validates one user's report (Report.Validate against Expect, then the agent's
	// own checks) and ingests it. A refused report returns an error naming the field and
	// changes no state.
	Receive(r R) error
}

// LDPCurator is the curator of a locally private agent. It accepts only *Privatized reports:
// a raw *Trajectory, *Leaves or *Path cannot be handed to it (a compile-time error), and it
// holds no noise stream (its users privatise their own reports).
type LDPCurator[T any] interface {
	Curator[T, *Privatized]
}

// User is the client side of an agent: a user plays one episode and reports it. Under LDP she
// privatises her report herself, from a noise stream the curator does not hold. (In a
// simulation one User value plays every user in turn.)
type User[T, E any, R Report] interface {
	// Play plays episode k (1-based) with the published policy p on her environment, drawing
	// her environment's responses from her own stream r. E is the family's episode.
	Play(k int, p Policy[T], r *rand.Rand) (E, error)
	// Report turns her episode into her report (privatised under LDP). The report is valid
	// until the next call.
	Report(e E) (R, error)
}

// Evaluator computes the exact regret of each episode through the family's model (it reads
// the true model: simulations only; nothing of it reaches the curator).
type Evaluator[T, E any] interface {
	// Policy evaluates a newly published rule exactly (called when its version changes).
	Policy(p Policy[T]) error
	// Regret returns the exact regret of episode k, played as e with the rule last passed to
	// Policy (V*₁(s₁) − V^π₁(s₁), or its expectation over s₁, as the family defines it).
	Regret(k int, e E) (float64, error)
}

// errBadTransport is returned when a Transport hands back a report of another type.
var errBadTransport = errors.New("transport returned a report of another type")
