package agentkit

// SetScaledIdentity overwrites the d×d row-major matrix a (len(a) = d·d) with v·I.
func SetScaledIdentity(a []float64, d int, v float64) {
	clear(a)
	for i := 0; i < d; i++ {
		a[i*d+i] = v
	}
}
