package agentkit

import "fmt"

// Name returns names[v] for 0 ≤ v < len(names) and "typ(v)" otherwise: the String method of
// an enumeration whose values are 0, 1, … in the order of names.
func Name[T ~int](v T, typ string, names ...string) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, int(v))
}
