package servefuzz

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
)

// TestEveryAgentBounded (issue 25 item 2): for every served agent, a report of huge finite
// numbers is either refused naming the field (every LDP agent refuses a block entry beyond
// its public bound) or clipped into the agent's sensitivity (trusted agents), and the next
// publication encodes; a report of zeros (within every bound) is accepted.
func TestEveryAgentBounded(t *testing.T) {
	for _, tg := range []Target{tabular, linmdp, linmix, lq} {
		for _, name := range tg.Agents {
			s, err := tg.Session(reg(), name, 1)
			if err != nil {
				t.Fatal(err)
			}
			head := s.Expect()
			if err := s.Receive(Build(head, []float64{0}, 0)); err != nil {
				t.Errorf("%s: a report of zeros refused: %v", name, err)
			}
			err = s.Receive(Build(head, []float64{1e12, -1e300, 1e150}, 0))
			var fe *protocol.FieldError
			switch {
			case head.Kind == protocol.KindPrivatized && (!errors.As(err, &fe) || !strings.HasPrefix(fe.Field, "blocks[")):
				t.Errorf("%s (LDP): a report of 1e12s: got %v, want a FieldError naming a block entry", name, err)
			case err != nil && !errors.As(err, &fe):
				t.Errorf("%s: refused without naming the field: %v", name, err)
			}
			if err := publish(s); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			outcome := "accepted (clipped by the agent)"
			if err != nil {
				outcome = "refused: " + fe.Field
			}
			t.Logf("%s/%s (%s): huge values %s", tg.Family, name, head.Kind, outcome)
		}
	}
}

// TestHonestReportsAccepted: the LDP bounds refuse no honest report. Every LDP agent plays
// its capacity of users through the one episode loop (protocol.Run: its own users, privatising
// on their side); a refused report fails the run.
func TestHonestReportsAccepted(t *testing.T) {
	for _, tg := range []Target{tabular, linmdp, linmix, lq} {
		for _, name := range tg.Agents {
			for seed := uint64(1); seed <= 3; seed++ {
				sv, err := tg.Served(reg(), name, seed)
				if err != nil {
					t.Fatal(err)
				}
				if sv.Session.Expect().Kind != protocol.KindPrivatized {
					break
				}
				st := engine.Streams{Seed: seed}
				if err := protocol.Run(context.Background(), sv.Session, protocol.Options{Episodes: Capacity, Users: st.Episodes(sv.Users)}); err != nil {
					t.Errorf("%s/%s seed %d: %v", tg.Family, name, seed, err)
				}
			}
		}
	}
}
