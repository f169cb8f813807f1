package enginetest

import "testing"

// WithRow makes *table, for the test only, its rows plus row (replacing a row of the same name,
// nameOf); the table is restored when the test ends, so tests using it must not run in parallel.
// The families' recipe tests add a fake agent to their agent table with it.
func WithRow[T any](t testing.TB, table *[]T, row T, nameOf func(T) string) {
	t.Helper()
	old := *table
	var rows []T
	for _, r := range old {
		if nameOf(r) != nameOf(row) {
			rows = append(rows, r)
		}
	}
	*table = append(rows, row)
	t.Cleanup(func() { *table = old })
}
