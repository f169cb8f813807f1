package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/longtest"
)

// TestREADMECommands runs every `dprl …` command the README shows (in code blocks and inline
// code): `dprl run` commands run as written except for a smaller K and one seed and a temporary
// --out; `dprl reproduce` commands (each alternative of "a | b" and with each optional [--flag])
// are parsed with --help here and run in full by the long checks (TestGoldenHashes) and .ci/run
// (the quick start); `dprl serve` and `dprl client` run as written (on a free port and in a
// temporary data directory); other commands run as written. The two quick-start commands are
// run by .ci/run. A README command that no longer parses, or fails, fails this test.
func TestREADMECommands(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(string(data))
	if len(cmds) < 5 {
		t.Fatalf("found %d dprl commands in README.md: the extraction is broken", len(cmds))
	}
	dir := t.TempDir()
	useTestTokens(t)
	var server string // the URL of the README's `dprl serve`, started as a process
	// The README's serve commands run as written on a fresh machine: the server generates its
	// tokens into the data directory and the client reads them from there. Only the data
	// directory (./dprl-data → a temporary one) and the port (a free one: 8080 may be taken)
	// change.
	serveData := map[string]string{}
	for i, c := range cmds {
		args := strings.Fields(c)[1:]
		if args[0] == "serve" && server == "" {
			data := flagValue(args, "--data")
			serveData[data] = filepath.Join(dir, "serve-data")
			args = withFlag(withFlag(args, "--data", serveData[data]), "--addr", "127.0.0.1:0")
			p := startServeArgs(t, args)
			server = p.url
			continue
		}
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			switch args[0] {
			case "serve": // a second serve command of the README: it must parse
				args = append(args, "--help")
			case "client":
				if server == "" {
					t.Fatal("the README shows dprl client before dprl serve")
				}
				// As written, with 300 users (TestREADMEServeAsWritten, a long check, plays
				// the README's number).
				args = withFlag(withFlag(readmeClient(args, server, serveData), "--capacity", "300"), "--concurrency", "4")
			case "run":
				if !slices.Contains(args, "--config") {
					args = withFlag(args, "--episodes", "300")
					args = withFlag(args, "--seeds", "1")
				}
				args = append(args, "--quiet", "--out", filepath.Join(dir, "run", string(rune('a'+i%26))+strings.Repeat("x", i/26)))
			case "reproduce":
				args = append(args, "--help")
			case "audit":
				args = append(args, "--list")
			}
			args = withRelativePaths(args)
			code, _, stderr := runCLI(t, args...)
			if code != 0 {
				t.Errorf("dprl %s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
		})
	}
}

// readmeClient is the README's `dprl client …` command args against the README's server: its
// URL and data directory (serveData maps the README's --data to the temporary one).
func readmeClient(args []string, server string, serveData map[string]string) []string {
	args = withFlag(args, "--server", server)
	if d, ok := serveData[flagValue(args, "--data")]; ok {
		args = withFlag(args, "--data", d)
	}
	return args
}

// TestREADMEServeAsWritten runs the README's `dprl serve` and `dprl client` commands exactly as
// written on a fresh machine — the client reads the tokens the server generated into its data
// directory, and plays the README's 20 000 users — with only the data directory (a temporary
// one) and the port (a free one) changed. A long check (10 s).
func TestREADMEServeAsWritten(t *testing.T) {
	longtest.Skip(t, "the README's serve quick start with its 20 000 users, 10 s")
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var server string
	serveData := map[string]string{}
	clients := 0
	for _, c := range readmeCommands(string(data)) {
		args := strings.Fields(c)[1:]
		switch {
		case args[0] == "serve" && server == "":
			serveData[flagValue(args, "--data")] = filepath.Join(dir, "serve-data")
			server = startServeArgs(t, withFlag(withFlag(args, "--data", filepath.Join(dir, "serve-data")), "--addr", "127.0.0.1:0")).url
		case args[0] == "client" && server != "":
			clients++
			args = readmeClient(args, server, serveData)
			if code, stdout, stderr := runCLI(t, args...); code != 0 || !strings.Contains(stdout, "20000 users") {
				t.Errorf("dprl %s: exit %d: %s%s", strings.Join(args, " "), code, stdout, stderr)
			}
		}
	}
	if server == "" || clients == 0 {
		t.Fatalf("the README shows no dprl serve followed by dprl client")
	}
}

// readmeCommands extracts the dprl commands of a Markdown text: lines of code blocks and inline
// code spans that start with "dprl " (alternatives "a | b" expanded, "[--x]" both with and
// without, a trailing comment dropped).
func readmeCommands(md string) []string {
	var raw []string
	inBlock := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			raw = append(raw, strings.TrimSpace(line))
			continue
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(line, -1) {
			raw = append(raw, m[1])
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, r := range raw {
		r, _, _ = strings.Cut(r, "#")
		r = strings.TrimSpace(strings.ReplaceAll(r, `\|`, "|"))
		if !strings.HasPrefix(r, "dprl ") {
			continue
		}
		for _, c := range expandCommand(r) {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// expandCommand expands "dprl reproduce a | b [--long]" into every combination.
func expandCommand(c string) []string {
	if i := strings.Index(c, "["); i >= 0 {
		j := strings.Index(c[i:], "]")
		if j > 0 {
			with := c[:i] + c[i+1:i+j] + c[i+j+1:]
			without := c[:i] + c[i+j+1:]
			return append(expandCommand(with), expandCommand(without)...)
		}
	}
	if strings.Contains(c, " | ") {
		f := strings.Fields(c)
		// "dprl reproduce a | b | c --flag": the alternatives are the words around each "|".
		var head, tail []string
		var alts []string
		for k := 0; k < len(f); k++ {
			if k+1 < len(f) && f[k+1] == "|" || k > 0 && f[k-1] == "|" {
				alts = append(alts, f[k])
				continue
			}
			if f[k] == "|" {
				continue
			}
			if alts == nil {
				head = append(head, f[k])
			} else {
				tail = append(tail, f[k])
			}
		}
		var out []string
		for _, a := range alts {
			out = append(out, strings.Join(append(append(append([]string(nil), head...), a), tail...), " "))
		}
		return out
	}
	return []string{strings.Join(strings.Fields(c), " ")}
}

// withFlag sets flag to value in args (replacing a given value).
func withFlag(args []string, flag, value string) []string {
	for i := range args {
		if args[i] == flag && i+1 < len(args) {
			args[i+1] = value
			return args
		}
	}
	return append(args, flag, value)
}

// flagValue returns the value of flag in args ("" when it is not given).
func flagValue(args []string, flag string) string {
	for i := range args {
		if args[i] == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// withRelativePaths makes the README's repository paths (model/…) relative to this package.
func withRelativePaths(args []string) []string {
	for i, a := range args {
		if strings.HasPrefix(a, "model/") || strings.HasPrefix(a, "experiment/") || strings.HasPrefix(a, "examples/") {
			args[i] = filepath.Join("..", "..", a)
		}
	}
	return args
}
