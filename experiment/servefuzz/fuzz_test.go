package servefuzz

import (
	"runtime/debug"
	"slices"
	"sync"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	tabagents "github.com/dprl/dprl/agents/tabular"
	explin "github.com/dprl/dprl/experiment/linmdp"
	lmexp "github.com/dprl/dprl/experiment/linmix"
	explq "github.com/dprl/dprl/experiment/lq"
)

// The four families' targets: small environments, every servable agent.
var (
	tabular = Target{Family: "tabular", Env: "env: {name: riverswim, params: {horizon: 3}}\n", Agents: []string{
		"ucbvi", "dp-ucbvi-jdp", "dp-ucbvi-ldp", "practical-jdp", "practical-jdp-theory", "practical-jdp-plugin",
		"practical-ldp", "practical-ldp-plugin", "practical-psrl-jdp", "practical-ucbvi", "practical-psrl"}}
	linmdp = Target{Family: "linmdp", Env: "env: {name: latentriver, params: {m: 2, copies: 2, horizon: 3}}\n", Agents: []string{
		"lsvi-ucb", "rare-switch", "ngo", "ngo-printed", "rare-switch-reg", "luyo-batched", "luyo-zcdp", "batch-twin",
		"luyo-nonbatched", "practical-lsvi", "practical-lsvi-batched", "practical-rare-switch", "practical-batch-twin",
		"practical-lsvi-noiseoff", "practical-lsvi-theory"}}
	linmix = Target{Family: "linmix", Env: "env: {name: two-state-hard, params: {dim: 3, horizon: 3}}\n", Agents: []string{
		"ucrl-vtr/none", "ucrl-vtr/jdp", "ucrl-vtr/ldp", "ucrl-vtr+/none", "ucrl-vtr+/jdp", "ucrl-vtr+/ldp",
		"linopt-vi/none", "linopt-vi/jdp", "linopt-vi/ldp", "linopt-po/none", "linopt-po/jdp", "linopt-po/ldp",
		"practical-vtr/none", "practical-vtr/jdp", "practical-vtr/ldp"}}
	lq = Target{Family: "lq", Env: "env: {name: lq-e1}\n", Agents: []string{
		"ofu-rl", "private-ofu-rl", "practical-ofu-rl", "practical-ofu-rl-theory", "practical-ofu-rl-noise-off"}}
)

var reg = sync.OnceValue(Registry)

// fuzz is the body of every target. agent picks the agent; mode's bit 0 chooses between
// decoding data as a message (JSON or binary) against the curator's header and building a
// report of the header's shape from data read as float64s (bit 1: through its JSON encoding
// when it has one, bit 2: its binary one; bits 3–4: a wrong length, ±1); bits 5–7 say how many
// times the report is received (1–8).
func fuzz(t *testing.T, tg Target, agent, mode uint8, data []byte) {
	name := tg.Agents[int(agent)%len(tg.Agents)]
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("%s: panic: %v\n%s", name, p, debug.Stack())
		}
	}()
	s, err := tg.Session(reg(), name, 1)
	if err != nil {
		t.Fatal(err)
	}
	repeats := 1 + int(mode>>5)
	var rep protocol.Report
	if mode&1 == 0 {
		if rep, err = protocol.Decode(data, s.Expect()); err != nil {
			if err := publish(s); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return
		}
	} else {
		rep = Build(s.Expect(), Floats(data), []int{0, 1, -1, 0}[mode>>3&3])
		for _, enc := range []struct {
			on bool
			f  func(protocol.Report) ([]byte, error)
		}{{mode&2 != 0, protocol.EncodeJSON}, {mode&4 != 0, protocol.EncodeBinary}} {
			if !enc.on {
				continue
			}
			b, err := enc.f(rep)
			if err != nil {
				continue // JSON has no NaN or ±Inf
			}
			back, err := protocol.Decode(b, s.Expect())
			if err != nil {
				if err := publish(s); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return
			}
			rep = back
		}
	}
	if err := Exercise(s, rep, repeats); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func FuzzServeTabular(f *testing.F) { run(f, tabular) }
func FuzzServeLinMDP(f *testing.F)  { run(f, linmdp) }
func FuzzServeLinMix(f *testing.F)  { run(f, linmix) }
func FuzzServeLQ(f *testing.F)      { run(f, lq) }

func run(f *testing.F, tg Target) {
	f.Fuzz(func(t *testing.T, agent, mode uint8, data []byte) { fuzz(t, tg, agent, mode, data) })
}

// TestEveryAgentFuzzed: the targets list every agent the families serve (a new agent must be
// fuzzed); TestSeedCorpus builds each as the service does.
func TestEveryAgentFuzzed(t *testing.T) {
	tab := []string{"ucbvi", "dp-ucbvi-jdp", "dp-ucbvi-ldp"}
	for _, a := range tabagents.PracticalAgents() {
		tab = append(tab, a.Name)
	}
	for _, c := range []struct {
		tg   Target
		want []string
	}{{tabular, tab}, {linmdp, explin.AgentNames()}, {linmix, lmexp.AgentNames()}, {lq, explq.AgentNames()}} {
		if !slices.Equal(slices.Sorted(slices.Values(c.tg.Agents)), slices.Sorted(slices.Values(c.want))) {
			t.Errorf("%s: fuzzed agents %v, served agents %v", c.tg.Family, c.tg.Agents, c.want)
		}
	}
}
