package service

import (
	"crypto/rand"
	"math"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/families"
	"github.com/dprl/dprl/service/store"
)

// TestServedMechanismsDrawIndependentNoise builds served agents exactly as a production
// server does (streams of an experiment with a random key, secure noise) and records the
// secure noise sources each asks for (engine.Streams.Trace): every mechanism has its own
// name — a name asked for twice would give two mechanisms the same key and the same noise —,
// and the streams of two mechanisms' names are different and uncorrelated, while one name's
// stream is reproducible (the replay after a restart redraws it exactly).
func TestServedMechanismsDrawIndependentNoise(t *testing.T) {
	reg := families.New()
	for _, c := range []struct {
		family, agent string
		env           engine.EnvSpec
		min           int // the fewest mechanisms (named sources) the agent has
	}{
		{"tabular", "dp-ucbvi-jdp", engine.EnvSpec{Name: "riverswim"}, 2},
		{"tabular", "practical-jdp", engine.EnvSpec{Name: "riverswim"}, 1},
		{"lq", "ofu-rl", engine.EnvSpec{}, 2},
	} {
		t.Run(c.family+"/"+c.agent, func(t *testing.T) {
			spec := engine.RunSpec{Family: c.family, Name: "served", Agents: []string{c.agent}, Runs: engine.Runs{Episodes: 100, Seeds: []uint64{1}}, Env: c.env}
			spec.Privacy.Epsilons, spec.Privacy.Delta, spec.Privacy.Noise = []float64{1}, 1e-5, "secure"
			if err := spec.Validate(); err != nil {
				t.Fatal(err)
			}
			sv, err := engine.CheckServed(reg, &spec)
			if err != nil {
				t.Fatal(err)
			}
			def := &store.Experiment{ID: "e", Key: make([]byte, 32)}
			rand.Read(def.Key)
			st := streams(def, &spec)
			var names []string
			st.Trace = func(n string) { names = append(names, n) }
			if _, err := sv.Session(&spec, st); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, n := range names {
				if seen[n] {
					t.Errorf("the noise source %q is asked for twice: two mechanisms would draw the same noise (all: %q)", n, names)
				}
				seen[n] = true
			}
			if len(names) < c.min {
				t.Fatalf("%d secure noise sources (%q), want at least %d: its noise is not keyed by the experiment's key", len(names), names, c.min)
			}
			st.Trace = nil
			const n = 5000
			draw := func(name string) []float64 {
				src, out := st.SecureNoise(name), make([]float64, n)
				for i := range out {
					out[i] = src.AddGaussian(0, 1)
				}
				return out
			}
			streams := make([][]float64, len(names))
			for i, name := range names {
				streams[i] = draw(name)
				again := draw(name)
				for j := range again {
					if again[j] != streams[i][j] {
						t.Fatalf("%s: the stream is not reproducible from the key (draw %d)", name, j)
					}
				}
			}
			for i := range names {
				for j := i + 1; j < len(names); j++ {
					if r := corr(streams[i], streams[j]); math.Abs(r) > 0.06 || streams[i][0] == streams[j][0] {
						t.Errorf("%s and %s: correlation %.4f (|r| ≤ 0.06, 4 standard deviations, for independent streams of %d draws)", names[i], names[j], r, n)
					}
				}
			}
			t.Logf("%d mechanisms: %q", len(names), names)
		})
	}
}

func corr(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}
