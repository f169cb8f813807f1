package rundir

import "strings"

// FileName turns a label into a file name: ASCII letters, digits, '-', '.' and '_' are kept,
// every other character becomes '_'.
func FileName(label string) string {
	var b strings.Builder
	for _, r := range label {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// MergeAll merges the input lists in order into a new list (MergeInputs: an input listed
// twice is kept once, first come first).
func MergeAll(lists ...[]Input) []Input {
	var out []Input
	for _, l := range lists {
		out = MergeInputs(out, l)
	}
	return out
}
