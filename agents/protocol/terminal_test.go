package protocol_test

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
)

// terminated returns a tabular trajectory of L steps for a header with terminal states
// {3, 5}: states 0, 1, 2, 0, 1, … (never terminal) then end (terminal if L < H).
func terminated(head protocol.Header, L, end int) *protocol.Trajectory {
	r := &protocol.Trajectory{Header: head}
	for h := 0; h < L; h++ {
		r.States, r.Actions, r.Rewards = append(r.States, h%3), append(r.Actions, h%2), append(r.Rewards, edge[h%len(edge)])
	}
	r.States = append(r.States, end)
	return r
}

// TestTerminatedRoundTrip: a trajectory that ended on entering a terminal state (L < H steps)
// round-trips exactly through both encodings; so does an H-step one; the header carries the
// terminal states and a report whose header lists others is refused.
func TestTerminatedRoundTrip(t *testing.T) {
	const H = 8
	head := header(protocol.Tabular, protocol.KindTrajectory, protocol.Dims{Horizon: H, States: 6, Actions: 2, Terminal: []int{3, 5}})
	for _, L := range []int{1, 2, 5, H - 1, H} {
		end := 5
		if L == H {
			end = 1 // a full episode may end anywhere
		}
		r := terminated(head, L, end)
		if err := r.Validate(head); err != nil {
			t.Fatalf("L = %d: %v", L, err)
		}
		for name, enc := range map[string]func(protocol.Report) ([]byte, error){"json": protocol.EncodeJSON, "binary": protocol.EncodeBinary} {
			b, err := enc(r)
			if err != nil {
				t.Fatal(err)
			}
			if name == "json" && !strings.Contains(string(b), `"terminal":[3,5]`) {
				t.Errorf("the JSON header does not list the terminal states: %s", b)
			}
			got, err := protocol.Decode(b, head)
			if err != nil {
				t.Fatalf("L = %d, %s: %v", L, name, err)
			}
			g := got.(*protocol.Trajectory)
			if !reflect.DeepEqual(g.States, r.States) || !reflect.DeepEqual(g.Actions, r.Actions) || !reflect.DeepEqual(g.Header, r.Header) {
				t.Errorf("L = %d, %s: round trip changed the report", L, name)
			}
			for i := range r.Rewards {
				if math.Float64bits(g.Rewards[i]) != math.Float64bits(r.Rewards[i]) {
					t.Errorf("L = %d, %s: rewards[%d] changed", L, name, i)
				}
			}
		}
	}
	other := head
	other.Dims.Terminal = []int{3}
	b, _ := protocol.EncodeJSON(terminated(other, 2, 3))
	var fe *protocol.FieldError
	if _, err := protocol.Decode(b, head); !errors.As(err, &fe) || fe.Field != "header.dims.terminal" {
		t.Errorf("a header with other terminal states: %v", err)
	}
	// Without terminal states the header's JSON is the earlier one (no "terminal" key).
	plain := header(protocol.Tabular, protocol.KindTrajectory, protocol.Dims{Horizon: H, States: 6, Actions: 2})
	if b, _ := protocol.EncodeJSON(terminated(plain, H, 1)); strings.Contains(string(b), "terminal") {
		t.Errorf("a header without terminal states mentions them: %s", b)
	}
}

// TestTerminatedRefused: Validate and Decode refuse, naming the field, a trajectory that goes
// on after a terminal state, one shorter than H that ends in a non-terminal state, and every
// length that is not L+1 states, L actions and L rewards with 1 ≤ L ≤ H. Without terminal
// states every trajectory has H steps.
func TestTerminatedRefused(t *testing.T) {
	const H = 8
	head := header(protocol.Tabular, protocol.KindTrajectory, protocol.Dims{Horizon: H, States: 6, Actions: 2, Terminal: []int{3, 5}})
	goesOn := terminated(head, 4, 5)
	goesOn.States[2] = 3
	mk := func(f func(r *protocol.Trajectory)) *protocol.Trajectory {
		r := terminated(head, 4, 5)
		f(r)
		return r
	}
	plain := header(protocol.Tabular, protocol.KindTrajectory, protocol.Dims{Horizon: H, States: 6, Actions: 2})
	short := terminated(plain, 4, 5)
	short.Header = plain
	cases := []struct {
		name, field, msg string
		r                *protocol.Trajectory
		head             protocol.Header
	}{
		{"goes on after a terminal state", "states[2]", "state 3 is terminal but the episode goes on", goesOn, head},
		{"short, non-terminal end", "states", "4 steps end in non-terminal state 2 (an episode shorter than H = 8 must end in a terminal state)",
			mk(func(r *protocol.Trajectory) { r.States[4] = 2 }), head},
		{"no step", "actions", "got 0 actions", &protocol.Trajectory{Header: head, States: []int{3}, Actions: []int{}, Rewards: []float64{}}, head},
		{"more than H steps", "actions", "got 9 actions", terminated(head, H+1, 1), head},
		{"states", "states", "got 4 states, want L+1 = 5", mk(func(r *protocol.Trajectory) { r.States = r.States[:4] }), head},
		{"rewards", "rewards", "got 3 rewards, want L = 4", mk(func(r *protocol.Trajectory) { r.Rewards = r.Rewards[:3] }), head},
		{"state range", "states[4]", "state must be in [0, 5], got 6", mk(func(r *protocol.Trajectory) { r.States[4] = 6 }), head},
		{"no terminal states: H steps", "states", "got 5 states, want H+1 = 9", short, plain},
	}
	for _, c := range cases {
		check := func(how string, err error) {
			t.Helper()
			var fe *protocol.FieldError
			if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Msg, c.msg) {
				t.Errorf("%s, %s: got %v, want field %s: …%s…", c.name, how, err, c.field, c.msg)
			}
		}
		check("Validate", c.r.Validate(c.head))
		for name, enc := range map[string]func(protocol.Report) ([]byte, error){"json": protocol.EncodeJSON, "binary": protocol.EncodeBinary} {
			b, err := enc(c.r)
			if err != nil {
				t.Fatal(err)
			}
			_, err = protocol.Decode(b, c.head)
			if c.name == "more than H steps" && name == "binary" {
				// The binary decoder refuses the count itself, before allocating.
				var fe *protocol.FieldError
				if !errors.As(err, &fe) || fe.Field != "states" || !strings.Contains(fe.Msg, "count 10 exceeds 9") {
					t.Errorf("%s, binary: got %v", c.name, err)
				}
				continue
			}
			check("Decode "+name, err)
		}
	}
}

// TestBinaryTrajectoryCountBounded: a binary trajectory whose counts exceed H+1 states or H
// actions or rewards is refused at the count, naming the field (the length is bounded by the
// public horizon before anything is allocated).
func TestBinaryTrajectoryCountBounded(t *testing.T) {
	const H = 4
	head := header(protocol.Tabular, protocol.KindTrajectory, protocol.Dims{Horizon: H, States: 6, Actions: 2})
	b, err := protocol.EncodeBinary(&protocol.Trajectory{Header: head})
	if err != nil {
		t.Fatal(err)
	}
	prefix := b[:len(b)-3] // the header; then three empty counts
	for _, c := range []struct {
		field string
		body  []byte
	}{
		{"states", binary.AppendUvarint(nil, H+2)},
		{"actions", append([]byte{0}, binary.AppendUvarint(nil, H+1)...)},
		{"rewards", append([]byte{0, 0}, binary.AppendUvarint(nil, H+1)...)},
	} {
		msg := append(append([]byte(nil), prefix...), c.body...)
		msg = append(msg, make([]byte, 8*(H+2))...)
		_, err := protocol.Decode(msg, head)
		var fe *protocol.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Msg, "exceeds") {
			t.Errorf("%s: got %v", c.field, err)
		}
	}
}
