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

// TableNames returns the names (nameOf) of table's rows, in the table's order: what a family's
// AgentNames lists and its errors name as allowed.
func TableNames[T any](table []T, nameOf func(T) string) []string {
	out := make([]string, len(table))
	for i, r := range table {
		out[i] = nameOf(r)
	}
	return out
}

// TableEntries returns table's rows as `dprl list` entries, in the table's order: each row's
// name (nameOf) and its line (desc).
func TableEntries[T any](table []T, nameOf, desc func(T) string) []Entry {
	out := make([]Entry, len(table))
	for i, r := range table {
		out[i] = Entry{Name: nameOf(r), Desc: desc(r)}
	}
	return out
}
