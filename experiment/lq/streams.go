package lq

import (
	agents "github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/privacy/noise"
)

// runStreams returns the streams of an OFU-RL unit, all from the unit's engine.Streams (the
// paths agents/lq.Streams names: users/k, privacy/B1, privacy/B2, optimiser/k).
func runStreams(st engine.Streams) agents.RunStreams {
	return agents.RunStreams{Users: st.Episodes(engine.FromOne), B1: noise.NewSeeded(st.Path("privacy", "B1").Rand()),
		B2: noise.NewSeeded(st.Path("privacy", "B2").Rand()), Optimiser: st.Path("optimiser")}
}

// practicalRunStreams returns the streams of a practical unit (the paths
// agents/lq.PracticalStreams names: users/k, privacy/practical, optimiser/practical).
func practicalRunStreams(st engine.Streams) agents.PracticalRunStreams {
	return agents.PracticalRunStreams{Users: st.Episodes(engine.FromOne), Noise: noise.NewSeeded(st.Path("privacy", "practical").Rand()),
		Optimiser: st.Path("optimiser", "practical")}
}
