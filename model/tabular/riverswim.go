package tabular

// RiverSwim returns the standard episodic RiverSwim used in the DP-RL literature ("variant A"
// of the tabular spec §7.2): Osband, Russo & Van Roy (2013), as in TabulaRL's
// make_riverSwim(epLen, nState=6) and in Chowdhury & Zhou (2021), which Qiao & Wang (2023) §7
// follow. Six states s0..s5 (s0 leftmost), actions 0 = left, 1 = right, start in s0,
// deterministic rewards, the same table at every step:
//
//	s  | P(·|s,left) | P(·|s,right)                  | r(s,left) | r(s,right)
//	s0 | s0: 1       | s0: 0.4,  s1: 0.6             | 0.005     | 0
//	s1 | s0: 1       | s0: 0.05, s1: 0.6,  s2: 0.35  | 0         | 0
//	s2 | s1: 1       | s1: 0.05, s2: 0.6,  s3: 0.35  | 0         | 0
//	s3 | s2: 1       | s2: 0.05, s3: 0.6,  s4: 0.35  | 0         | 0
//	s4 | s3: 1       | s3: 0.05, s4: 0.6,  s5: 0.35  | 0         | 0
//	s5 | s4: 1       | s4: 0.4,  s5: 0.6             | 0         | 1
//
// With H = 20, V*_1(s0) = 3.397264.
func RiverSwim(H int) (*MDP, error) {
	const S, A = 6, 2
	p := make([]float64, S*A*S)
	r := make([]float64, S*A)
	set := func(s, a, t int, v float64) { p[(s*A+a)*S+t] = v }
	for s := 0; s < S; s++ {
		set(s, 0, max(s-1, 0), 1)
	}
	set(0, 1, 0, 0.4)
	set(0, 1, 1, 0.6)
	for s := 1; s < S-1; s++ {
		set(s, 1, s-1, 0.05)
		set(s, 1, s, 0.6)
		set(s, 1, s+1, 0.35)
	}
	set(S-1, 1, S-2, 0.4)
	set(S-1, 1, S-1, 0.6)
	r[0*A+0] = 0.005
	r[(S-1)*A+1] = 1
	init := make([]float64, S)
	init[0] = 1
	return NewHomogeneous("riverswim", S, A, H, p, r, init, Deterministic)
}
