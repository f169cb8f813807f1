package agentkit

import (
	"fmt"

	"github.com/dprl/dprl/privacy/counter"
)

// Batches follows the users of a fixed, data-independent release schedule: how many users
// were added, how many of them are in the open batch and how many batches are complete.
type Batches struct {
	Sched counter.Schedule
	// Done is the number of complete batches, In the number of users of the open batch and
	// Users the number of users added.
	Done, In, Users int
}

// NewBatches returns the batching of the schedule that releases after users 1, 2, 4, …, then
// every `every` users (every ≥ 1).
func NewBatches(every int) Batches { return Batches{Sched: counter.Schedule{Every: every}} }

// Add counts one more user. It returns true when her batch is complete: then Done has been
// advanced and a new batch opened.
func (b *Batches) Add() bool {
	b.Users++
	b.In++
	if b.In < b.Sched.Size(b.Done) {
		return false
	}
	b.Done++
	b.In = 0
	return true
}

// AddSum adds x to sum coordinate-wise and counts one more user (Add).
func (b *Batches) AddSum(sum, x []float64) bool {
	for i, v := range x {
		sum[i] += v
	}
	return b.Add()
}

// AddReport is AddSum for the noisy report x of one more user of a practical LDP server that
// admits at most capacity users. A report whose length is not len(sum), or one beyond the
// capacity, is refused with an error that begins with server, and nothing changes.
func (b *Batches) AddReport(sum, x []float64, capacity int, server string) (bool, error) {
	if len(x) != len(sum) {
		return false, fmt.Errorf("%s: report has length %d, want %d", server, len(x), len(sum))
	}
	if b.Users >= capacity {
		return false, fmt.Errorf("%s: already received K-1 = %d reports", server, capacity)
	}
	return b.AddSum(sum, x), nil
}
