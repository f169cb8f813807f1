// Package childproc starts a test's child process (the test binary re-executed as `dprl
// serve` or as a crash-test server) and waits until it says where it listens.
package childproc

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Start starts cmd with its standard error ours and its standard output read line by line; the
// process is killed and waited for when t ends. It returns the text after marker, up to the
// first space, on the first output line holding marker (the URL the child listens on). It
// fails t when the child exits before such a line or none comes within d (who names the child
// in the message). Every other line goes to other (nil: dropped), and done (nil: nothing) is
// called once the output ends.
func Start(t testing.TB, cmd *exec.Cmd, who, marker string, d time.Duration, other func(line string), done func()) string {
	t.Helper()
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	listening := make(chan string, 1)
	go func() {
		sent := false
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if _, rest, ok := strings.Cut(line, marker); ok && !sent {
				u, _, _ := strings.Cut(rest, " ")
				listening <- u
				sent = true
			} else if other != nil {
				other(line)
			}
		}
		if done != nil {
			done()
		}
		close(listening) // the process exited
	}()
	select {
	case u, ok := <-listening:
		if !ok {
			t.Fatalf("%s exited before listening", who)
		}
		return u
	case <-time.After(d):
		t.Fatalf("%s did not listen within %d s", who, int(d.Seconds()))
	}
	return ""
}
