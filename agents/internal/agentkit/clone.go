package agentkit

// CopyFloats replaces each slice *p by a copy that shares no memory with it (nil stays nil):
// the deep copy of the slice fields of a struct value copied with c := *r.
func CopyFloats(ps ...*[]float64) {
	for _, p := range ps {
		*p = append([]float64(nil), *p...)
	}
}
