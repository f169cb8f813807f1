package noise

// GaussianVecSource is implemented by sources that perturb a whole vector with i.i.d. Gaussian
// noise faster than entry by entry (the hot path of the Gaussian counters).
type GaussianVecSource interface {
	// AddGaussianVec adds i.i.d. N(0, sigma²) noise to every entry of x.
	AddGaussianVec(x []float64, sigma float64)
}

// AddGaussianVec adds i.i.d. N(0, sigma²) noise to every entry of x, with the same
// distribution, stream consumption and results as calling AddGaussian on each entry in order.
func (s *Seeded) AddGaussianVec(x []float64, sigma float64) {
	if sigma == 0 {
		return
	}
	r := s.r
	for i := range x {
		x[i] += sigma * r.NormFloat64()
	}
}
