// Package uniform computes the no-learning reference of the tabular and linear-MDP
// experiments: the value of the uniformly random policy, by backward induction.
package uniform

// Value returns V^{uniform}_1 of a finite-horizon MDP with horizon, states and actions:
// the initial distribution init weighs V_1, and q(h, s, a, next) is the action value
// r_h(s, a) + Σ_{s'} P_h(s'|s, a)·next[s'] given the values next of step h+1.
func Value(horizon, states, actions int, init []float64, q func(h, s, a int, next []float64) float64) float64 {
	next := make([]float64, states)
	cur := make([]float64, states)
	for h := horizon - 1; h >= 0; h-- {
		for s := 0; s < states; s++ {
			v := 0.0
			for a := 0; a < actions; a++ {
				v += q(h, s, a, next) / float64(actions)
			}
			cur[s] = v
		}
		next, cur = cur, next
	}
	v := 0.0
	for s, p := range init {
		v += p * next[s]
	}
	return v
}
