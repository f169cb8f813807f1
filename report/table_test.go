package report

import (
	"errors"
	"strings"
	"testing"
)

func TestWriteMarkdownTable(t *testing.T) {
	tests := []struct {
		name   string
		header []string
		rows   [][]string
		want   string
		errSub string
	}{
		{
			name:   "text columns padded",
			header: []string{"a", "bb"},
			rows:   [][]string{{"ccc", "d"}},
			want: "| a   | bb  |\n" +
				"| --- | --- |\n" +
				"| ccc | d   |\n",
		},
		{
			name:   "numeric column right-aligned",
			header: []string{"config", "regret", "exponent"},
			rows: [][]string{
				{"DP-UCBVI (ε=1)", "1234.5", "0.51"},
				{"non-private", "98", "0.5"},
				{"local", "", "12%"},
			},
			want: "| config         | regret | exponent |\n" +
				"| -------------- | -----: | -------: |\n" +
				"| DP-UCBVI (ε=1) | 1234.5 |     0.51 |\n" +
				"| non-private    |     98 |      0.5 |\n" +
				"| local          |        |      12% |\n",
		},
		{
			name:   "header only",
			header: []string{"x", "y"},
			want:   "| x   | y   |\n| --- | --- |\n",
		},
		{
			name:   "pipes and newlines escaped",
			header: []string{"name"},
			rows:   [][]string{{"a|b"}, {"line1\nline2"}},
			want: "| name           |\n" +
				"| -------------- |\n" +
				"| a\\|b           |\n" +
				"| line1<br>line2 |\n",
		},
		{name: "empty header", header: nil, errSub: "empty header"},
		{name: "ragged row", header: []string{"a"}, rows: [][]string{{"x", "y"}}, errSub: "row 0 has 2 cells, want 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			err := WriteMarkdownTable(&b, tc.header, tc.rows)
			if tc.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSub) {
					t.Fatalf("error = %v, want one containing %q", err, tc.errSub)
				}
				if b.Len() != 0 {
					t.Errorf("wrote %q despite error", b.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteMarkdownTableWriteError(t *testing.T) {
	err := WriteMarkdownTable(failWriter{}, []string{"a"}, [][]string{{"1"}})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("error = %v, want the writer's error", err)
	}
}
