package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReproduceLQSmall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lq")
	var out, errb bytes.Buffer
	code := run([]string{"reproduce", "lq", "--episodes", "60", "--seeds", "1", "--out", dir, "--quiet"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "zero policy Z(k)") {
		t.Fatalf("summary missing:\n%s", out.String())
	}
}

func TestReproduceLQBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"reproduce", "lq", "--episodes", "-3"},
		{"reproduce", "lq", "--multiplier", "-1"},
		{"reproduce", "lq", "--seeds", "x"},
		{"reproduce", "lq", "--workers", "-1"},
		{"reproduce", "lq", "--bogus"},
	} {
		var out, errb bytes.Buffer
		dir := filepath.Join(t.TempDir(), "x")
		code := run(append(args, "--out", dir), &out, &errb)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errb.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err == nil {
			t.Errorf("%v: wrote a manifest", args)
		}
	}
}

func TestListLQ(t *testing.T) {
	var b bytes.Buffer
	writeList(&b)
	for _, s := range []string{"lq-e1", "ofu-rl", "private-ofu-rl", "reproduce lq"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("listLQ lacks %q", s)
		}
	}
}
