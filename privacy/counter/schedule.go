package counter

// Schedule is a public, data-independent release schedule for a counter fed with batch sums:
// batch j (0-based) holds min(2^j, Every) stream elements, so the first releases come after
// 1, 2, 4, … elements and then every Every elements; a counter fed n elements in this way
// holds about n/Every + log₂ Every batch sums (practical-privacy spec §4). Because the schedule
// depends only on public parameters, when releases happen reveals nothing about the data.
type Schedule struct {
	// Every is the size of the batches once the doubling phase is over (≥ 1).
	Every int
}

// Size returns the number of elements in batch j.
func (s Schedule) Size(j int) int {
	if j >= 62 || 1<<j >= s.Every {
		return s.Every
	}
	return 1 << j
}

// Batches returns the number of complete batches among n elements.
func (s Schedule) Batches(n int) int {
	j := 0
	for n >= s.Size(j) {
		n -= s.Size(j)
		j++
	}
	return j
}
