package childproc

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMain makes this test binary a child when $CHILDPROC_TEST_LINES is set: it prints those
// lines (separated by |), then waits for its standard input to close.
func TestMain(m *testing.M) {
	if lines, ok := os.LookupEnv("CHILDPROC_TEST_LINES"); ok {
		for _, l := range strings.Split(lines, "|") {
			fmt.Println(l)
		}
		if os.Getenv("CHILDPROC_TEST_EXIT") == "" {
			os.Stdin.Read(make([]byte, 1))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func child(lines string, exit bool) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CHILDPROC_TEST_LINES="+lines)
	if exit {
		cmd.Env = append(cmd.Env, "CHILDPROC_TEST_EXIT=1")
	}
	return cmd
}

// fatalRecorder is a testing.TB whose Fatal records the message and stops the goroutine, as
// t.Fatal does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	panic(r)
}

func (r *fatalRecorder) Helper() {}

// TestStart: the URL is the word after the marker on the first line holding it; the lines
// before and after it reach other, done runs at the end of the output; a child that exits
// without the line fails the test naming it.
func TestStart(t *testing.T) {
	lines := make(chan string, 10)
	ended := make(chan struct{})
	cmd := child("hello|x: listening on http://127.0.0.1:1 (data d)|crash 3", false)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	u := Start(t, cmd, "the child", "listening on ", 30*time.Second, func(l string) { lines <- l }, func() { close(ended) })
	if u != "http://127.0.0.1:1" {
		t.Errorf("url %q", u)
	}
	in.Close()
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("done was not called")
	}
	close(lines)
	var others []string
	for l := range lines {
		others = append(others, l)
	}
	if strings.Join(others, "|") != "hello|crash 3" {
		t.Errorf("other lines %q", others)
	}

	r := &fatalRecorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != r {
				panic(p)
			}
		}()
		Start(r, child("no marker", true), "the silent child", "listening ", 30*time.Second, nil, nil)
	}()
	if r.msg != "the silent child exited before listening" {
		t.Errorf("a child exiting without listening: %q", r.msg)
	}
}
