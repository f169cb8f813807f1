package tabular

import (
	"fmt"
	"math"

	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/noise"
)

// Report is the message an LDP user sends: her visit, transition and reward indicators for
// every (h,s,a[,s']), each perturbed with i.i.d. Laplace noise on her side (Qiao & Wang §5.2:
// σ̃, σ̃', and the reward message, renamed ρ̃ in the spec to avoid the clash with r̃). Its
// fields are unexported: a Report can only be produced by a Randomizer.
type Report struct {
	n, nt, r []float64
}

func (*Report) message() {}

// Values returns copies of the three noisy vectors (for tests and audits).
func (r *Report) Values() (visits, transitions, rewards []float64) {
	return append([]float64(nil), r.n...), append([]float64(nil), r.nt...), append([]float64(nil), r.r...)
}

// Randomizer is the Local Privatizer's user-side randomiser M̃: it runs on the user's device.
type Randomizer struct {
	S, A, H int
	b       float64
	src     noise.Source
	rep     Report
	term    terminal // public terminal states (set by New; none for NewRandomizer)
}

// NewRandomizer returns the user-side randomiser with report scale b_L fixed from public
// parameters (3H/ε under the paper calibration).
func NewRandomizer(S, A, H int, bL float64, src noise.Source) *Randomizer {
	n := H * S * A
	return &Randomizer{S: S, A: A, H: H, b: bL, src: src,
		rep: Report{n: make([]float64, n), nt: make([]float64, n*S), r: make([]float64, n)}}
}

// Encode implements Client: the dense noisy report of t. Every entry, including the zero
// ones, gets noise (spec pitfall 14). The report buffer is reused by the next call. An invalid
// trajectory (see validateTrajectory) is encoded as a rejection that the server turns into an
// error; nothing about it is noised or sent.
func (z *Randomizer) Encode(t *model.Trajectory) Message {
	r, err := z.Randomize(t)
	if err != nil {
		return rejected{err}
	}
	return r
}

// rejected is the message of a client whose trajectory failed validation: the server returns
// its error (the error names the field and the allowed range).
type rejected struct{ err error }

func (rejected) message() {}

// Randomize returns the dense noisy report of t (see Encode). This is the LDP privacy
// boundary: states and actions are validated (an error, before anything is noised) and
// rewards are clipped to [0, 1] here (clipReward), so a buggy or hostile client's report has
// exactly the sensitivity the calibration assumes. A terminated episode of L < H steps sets
// the indicators of its L steps only (the scale b is that of H steps).
func (z *Randomizer) Randomize(t *model.Trajectory) (*Report, error) {
	L, err := validateTrajectory(t, z.S, z.A, z.H, z.term)
	if err != nil {
		return nil, err
	}
	r := &z.rep
	clear(r.n)
	clear(r.nt)
	clear(r.r)
	S, A := z.S, z.A
	for h := 0; h < L; h++ {
		i := (h*S+t.S[h])*A + t.A[h]
		r.n[i], r.r[i], r.nt[i*S+t.S[h+1]] = 1, clipReward(t.R[h]), 1
	}
	c := noise.LaplaceNoise(z.b)
	c.AddVec(r.n, z.src)
	c.AddVec(r.nt, z.src)
	c.AddVec(r.r, z.src)
	return r, nil
}

// validateTrajectory checks a user's trajectory at the privacy boundary: L+1 states in
// [0, S), L actions in [0, A) and L rewards, L = H or, with terminal states, L ∈ [1, H] ending
// in a terminal state and passing through none before (terminal.steps, terminal.ends). An
// index out of range would otherwise panic or, worse, land in another (h, s, a) stream. It
// returns L, the number of steps the user contributes.
func validateTrajectory(t *model.Trajectory, S, A, H int, term terminal) (int, error) {
	L, err := term.steps(t, H)
	if err != nil {
		return 0, err
	}
	for h, s := range t.S {
		if s < 0 || s >= S {
			return 0, fmt.Errorf("trajectory.S[%d]: state must be in [0, %d]", h, S-1)
		}
	}
	if err := term.ends(t, L, H); err != nil {
		return 0, err
	}
	for h, a := range t.A {
		if a < 0 || a >= A {
			return 0, fmt.Errorf("trajectory.A[%d]: action must be in [0, %d]", h, A-1)
		}
	}
	return L, nil
}

// clipReward maps a reported reward into [0, 1], the range the calibration assumes (tabular
// spec §2.1): values outside are clipped and NaN becomes 0. Clipping rather than rejecting
// keeps the boundary total — no error path, and hence no observable side channel, depends on
// the reward.
func clipReward(r float64) float64 {
	if !(r > 0) { // NaN, −Inf, negative
		return 0
	}
	return math.Min(r, 1)
}

// LocalServer is the Local Privatizer's server side: it only ever receives Reports and keeps
// their running sums (spec §4.2). It has no method or field through which a raw trajectory
// could reach it.
type LocalServer struct {
	S, A, H, K int
	priv       PrivacyConfig
	b          float64
	bb         *Billboard
}

// NewLocalServer returns the server side for K episodes; b is the public report scale.
func NewLocalServer(S, A, H, K int, priv PrivacyConfig, b float64) (*LocalServer, error) {
	if err := checkShape(S, A, H, K); err != nil {
		return nil, err
	}
	if err := model.CheckSize("local server: ", S, A, H); err != nil {
		return nil, err
	}
	l := &LocalServer{S: S, A: A, H: H, K: K, priv: priv, b: b, bb: newBillboard(S, A, H)}
	l.setE()
	return l, nil
}

// Receive adds one privatized report to the running sums.
func (l *LocalServer) Receive(r *Report) error {
	if len(r.n) != len(l.bb.N) || len(r.nt) != len(l.bb.NT) || len(r.r) != len(l.bb.R) {
		return fmt.Errorf("local server: report shape does not match S=%d, A=%d, H=%d", l.S, l.A, l.H)
	}
	if l.bb.Users >= l.K-1 {
		return fmt.Errorf("local server: already received K-1 = %d reports", l.K-1)
	}
	for i, v := range r.n {
		l.bb.N[i] += v
	}
	for i, v := range r.nt {
		l.bb.NT[i] += v
	}
	for i, v := range r.r {
		l.bb.R[i] += v
	}
	l.bb.Users++
	l.setE()
	return nil
}

func (l *LocalServer) setE() {
	c := l.bb.Users // the release before episode k sums k−1 noises (time-varying E_k, spec §4.4)
	if l.priv.LocalFixedE {
		c = l.K
	}
	l.bb.E = l.priv.eBound(l.b, c, l.S, l.A, l.H, l.K)
}

// Release returns the current sums. The billboard is valid until the next Receive.
func (l *LocalServer) Release() *Billboard { return l.bb }
