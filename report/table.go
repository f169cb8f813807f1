package report

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WriteMarkdownTable writes a GitHub-flavoured Markdown table to w with the
// given header and rows, padding every column to a common width so the
// source is readable as plain text. Columns whose non-empty body cells all
// parse as numbers are right-aligned (`---:`); others are left-aligned.
//
// Pipe characters in cells are escaped and line breaks are replaced by
// <br>, so any string can be used as a cell. Widths are measured in runes,
// so columns containing wide (for example CJK) characters may not line up
// exactly in a monospaced view; the rendered table is unaffected. Every row
// must have len(header) cells and header must not be empty.
func WriteMarkdownTable(w io.Writer, header []string, rows [][]string) error {
	if len(header) == 0 {
		return errors.New("report: WriteMarkdownTable: empty header")
	}
	for i, r := range rows {
		if len(r) != len(header) {
			return fmt.Errorf("report: WriteMarkdownTable: row %d has %d cells, want %d", i, len(r), len(header))
		}
	}
	cells := make([][]string, 0, len(rows)+1)
	for _, r := range append([][]string{header}, rows...) {
		esc := make([]string, len(r))
		for j, s := range r {
			esc[j] = escapeCell(s)
		}
		cells = append(cells, esc)
	}
	ncol := len(header)
	width := make([]int, ncol)
	numeric := make([]bool, ncol)
	for j := range ncol {
		width[j] = 3 // minimum delimiter "---"
		numeric[j] = len(rows) > 0
		nonEmpty := false
		for i, r := range cells {
			width[j] = max(width[j], utf8.RuneCountInString(r[j]))
			if i == 0 || r[j] == "" {
				continue
			}
			nonEmpty = true
			if _, err := strconv.ParseFloat(strings.TrimSuffix(r[j], "%"), 64); err != nil {
				numeric[j] = false
			}
		}
		numeric[j] = numeric[j] && nonEmpty
		if numeric[j] {
			width[j] = max(width[j], 4) // "---:"
		}
	}

	var b strings.Builder
	writeRow := func(r []string, body bool) {
		b.WriteByte('|')
		for j, s := range r {
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(s))
			b.WriteByte(' ')
			if body && numeric[j] {
				b.WriteString(pad)
				b.WriteString(s)
			} else {
				b.WriteString(s)
				b.WriteString(pad)
			}
			b.WriteString(" |")
		}
		b.WriteByte('\n')
	}
	writeRow(cells[0], false)
	b.WriteByte('|')
	for j := range ncol {
		b.WriteByte(' ')
		if numeric[j] {
			b.WriteString(strings.Repeat("-", width[j]-1))
			b.WriteByte(':')
		} else {
			b.WriteString(strings.Repeat("-", width[j]))
		}
		b.WriteString(" |")
	}
	b.WriteByte('\n')
	for _, r := range cells[1:] {
		writeRow(r, true)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: WriteMarkdownTable: %w", err)
	}
	return nil
}

// escapeCell makes s safe to place in a Markdown table cell.
func escapeCell(s string) string {
	if !strings.ContainsAny(s, "|\r\n") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.ReplaceAll(s, "\n", "<br>")
	return strings.ReplaceAll(s, "|", `\|`)
}
