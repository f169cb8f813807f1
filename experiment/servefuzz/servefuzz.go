// Package servefuzz drives every servable agent of every family through the path a report
// takes in `dprl serve` — decode against the curator's header, Receive, Publish, EncodeRule —
// with arbitrary bytes and arbitrary floats (issue 25 item 2). Its fuzz targets
// (FuzzServeTabular, FuzzServeLinMDP, FuzzServeLinMix, FuzzServeLQ) fail on any panic and on a
// published rule that cannot be encoded; their seed corpora (testdata/fuzz) hold huge finite
// values, NaN and ±Inf encodings and wrong lengths, and run in plain `go test`. `.ci/fuzz`
// runs each target for a bounded time.
//
// The sessions are built exactly as the service builds them: engine.CheckServed of a served
// RunSpec, then the family's Servable.Session with seeded engine.Streams.
package servefuzz

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/families"
)

// Target is one family under fuzzing: a small environment (so each iteration is fast) and the
// family's servable agents.
type Target struct {
	// Family is the family's registry name.
	Family string
	// Env is the RunSpec's env line.
	Env string
	// Agents are the family's servable agents.
	Agents []string
}

// Capacity is the K of every fuzzed session: small, so that a few reports fill a release
// schedule, and large enough that Receive is called several times.
const Capacity = 10

// Session builds agent of t as `dprl serve` does (engine.CheckServed, then the family's
// Session with seeded streams) and returns its contract. A private agent gets ε = 1; an agent
// refused with an ε (a non-private one) is built without.
func (t Target) Session(reg *engine.Registry, agent string, seed uint64) (protocol.Session, error) {
	sv, err := t.Served(reg, agent, seed)
	return sv.Session, err
}

// Served is Session's served agent (its contract and how its users draw their episodes).
func (t Target) Served(reg *engine.Registry, agent string, seed uint64) (engine.Served, error) {
	return t.ServedK(reg, agent, seed, Capacity)
}

// ServedK is Served with capacity k instead of Capacity.
func (t Target) ServedK(reg *engine.Registry, agent string, seed uint64, k int) (engine.Served, error) {
	var first error
	for _, eps := range []string{"privacy: {epsilons: [1]}\n", ""} {
		doc := fmt.Sprintf("%sepisodes: %d\nseeds: [%d]\nagents: [%s]\n%s", t.Env, k, seed, agent, eps)
		s, err := engine.ParseRunSpec([]byte(doc), t.Family)
		if err == nil {
			var sv engine.Servable
			if sv, err = engine.CheckServed(reg, s); err == nil {
				var served engine.Served
				if served, err = sv.Session(s, engine.Streams{Seed: seed}); err == nil {
					return served, nil
				}
			}
		}
		if first == nil {
			first = err
		}
	}
	return engine.Served{}, fmt.Errorf("%s/%s: %w", t.Family, agent, first)
}

// Registry returns the registry of every family (as cmd/dprl and the service build it).
func Registry() *engine.Registry { return families.New() }

// Floats reads data as little-endian float64s (a short tail is zero-padded). An empty input
// gives one 0.
func Floats(data []byte) []float64 {
	n := (len(data) + 7) / 8
	if n == 0 {
		return []float64{0}
	}
	out := make([]float64, n)
	var b [8]byte
	for i := range out {
		clear(b[:])
		copy(b[:], data[8*i:])
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
	}
	return out
}

// Build returns a report of the shape want describes, its numbers taken cyclically from xs
// (states and actions of a trajectory are reduced into their ranges, so that the numbers reach
// the curator's own checks). skew, if non-zero, lengthens or shortens the first variable-length
// part by that many entries (wrong lengths).
func Build(want protocol.Header, xs []float64, skew int) protocol.Report {
	i := 0
	next := func() float64 { v := xs[i%len(xs)]; i++; return v }
	vec := func(n int) []float64 {
		v := make([]float64, max(n, 0))
		for j := range v {
			v[j] = next()
		}
		return v
	}
	idx := func(n int) int {
		v := next()
		if n <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0
		}
		return int(math.Mod(math.Abs(v), float64(n)))
	}
	d := want.Dims
	switch {
	case want.Kind == protocol.KindPrivatized:
		r := &protocol.Privatized{Header: want, Blocks: make([][]float64, len(d.Blocks))}
		for b, n := range d.Blocks {
			if b == 0 {
				n += skew
			}
			r.Blocks[b] = vec(n)
		}
		return r
	case want.Family == protocol.LinMix:
		steps := max(d.Steps+skew, 0)
		r := &protocol.Leaves{Header: want, X: make([][][]float64, steps), Y: make([][]float64, steps)}
		for h := range steps {
			r.X[h] = make([][]float64, len(d.Regressors))
			for k, n := range d.Regressors {
				r.X[h][k] = vec(n)
			}
			r.Y[h] = vec(len(d.Regressors))
		}
		return r
	case want.Family == protocol.LQ:
		r := &protocol.Path{Header: want, States: make([][]float64, max(d.Horizon+1+skew, 0)), Inputs: make([][]float64, d.Horizon)}
		for h := range r.States {
			r.States[h] = vec(d.StateDim)
		}
		for h := range r.Inputs {
			r.Inputs[h] = vec(d.InputDim)
		}
		return r
	default:
		H := d.Horizon
		r := &protocol.Trajectory{Header: want, States: make([]int, max(H+1+skew, 0)), Actions: make([]int, H), Rewards: make([]float64, H)}
		for h := range r.States {
			r.States[h] = idx(d.States)
		}
		for h := range r.Actions {
			r.Actions[h] = idx(d.Actions)
		}
		for h := range r.Rewards {
			r.Rewards[h] = next()
		}
		return r
	}
}

// Exercise hands rep to s repeats times (at most Capacity), publishing after every report as
// the service's committer does, and returns an error if Publish or EncodeRule fails in a way
// the service could not serve: a Publish error is allowed (the service keeps the last policy),
// a rule that does not encode is not. A panic propagates (the fuzz target fails on it).
func Exercise(s protocol.Session, rep protocol.Report, repeats int) error {
	if err := publish(s); err != nil {
		return err
	}
	for range min(repeats, s.Capacity()) {
		if err := s.Receive(rep); err != nil {
			var fe *protocol.FieldError
			if !asFieldError(err, &fe) {
				return fmt.Errorf("receive refused a report without naming the field: %v", err)
			}
		}
		if err := publish(s); err != nil {
			return err
		}
	}
	return nil
}

func publish(s protocol.Session) error {
	_, rule, err := s.Publish()
	if err != nil {
		return nil // the service keeps serving the last policy
	}
	if _, err := protocol.EncodeRule(rule); err != nil {
		return fmt.Errorf("published rule %T cannot be encoded: %v", rule, err)
	}
	return nil
}

func asFieldError(err error, fe **protocol.FieldError) bool { return errors.As(err, fe) }
