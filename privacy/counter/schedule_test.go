package counter

import "testing"

func TestSchedule(t *testing.T) {
	s := Schedule{Every: 5}
	for j, want := range []int{1, 2, 4, 5, 5, 5} {
		if got := s.Size(j); got != want {
			t.Errorf("Size(%d) = %d, want %d", j, got, want)
		}
	}
	// Batches after n elements: 1 | 2 | 4 | 5 | 5 … (cumulative 1, 3, 7, 12, 17).
	for _, c := range []struct{ n, want int }{{0, 0}, {1, 1}, {2, 1}, {3, 2}, {6, 2}, {7, 3}, {11, 3}, {12, 4}, {17, 5}, {1000, 201}} {
		if got := s.Batches(c.n); got != c.want {
			t.Errorf("Batches(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	if got := (Schedule{Every: 1}).Batches(10); got != 10 {
		t.Errorf("Every=1: Batches(10) = %d, want 10", got)
	}
}
