package engine

// TableRow returns the row of table whose name (nameOf) is name, or the zero row and false: the
// families' agent tables are looked up through it.
func TableRow[T any](table []T, name string, nameOf func(T) string) (T, bool) {
	for _, r := range table {
		if nameOf(r) == name {
			return r, true
		}
	}
	var zero T
	return zero, false
}
