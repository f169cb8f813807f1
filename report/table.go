package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// WriteMarkdownTable writes a Markdown table with aligned columns.
func WriteMarkdownTable(w io.Writer, header []string, rows [][]string) error {
	width := make([]int, len(header))
	for i, h := range header {
		width[i] = utf8.RuneCountInString(h)
	}
	for r, row := range rows {
		if len(row) != len(header) {
			return fmt.Errorf("report: row %d has %d cells, want %d", r, len(row), len(header))
		}
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	line := func(cells []string) string {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range cells {
			b.WriteString(" " + c + strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)) + " |")
		}
		return b.String() + "\n"
	}
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	out := line(header) + line(sep)
	for _, row := range rows {
		out += line(row)
	}
	_, err := io.WriteString(w, out)
	return err
}
