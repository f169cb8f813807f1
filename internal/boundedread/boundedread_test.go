//go:build unix

package boundedread

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dprl/dprl/internal/boundedread/boundedreadtest"
)

// within fails the test if f does not return within 30 s (a FIFO would block forever).
func within(t *testing.T, f func()) {
	t.Helper()
	boundedreadtest.Within(t, "reading the file", 30*time.Second, "", f)
}

func TestReadFileRegular(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int64{5, 6, DefaultLimit} {
		got, err := ReadFile(p, limit)
		if err != nil || string(got) != "12345" {
			t.Errorf("limit %d: %q, %v", limit, got, err)
		}
	}
	_, err := ReadFile(p, 4)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "4 bytes") || !strings.Contains(err.Error(), p) {
		t.Errorf("limit 4: err = %v, want ErrTooLarge naming the file and the limit", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
	if _, err := ReadField("--env-file", p, 1<<20); err != nil {
		t.Errorf("ReadField: %v", err)
	}
	if _, err := ReadField("--env-file", p, 1); err == nil || !strings.HasPrefix(err.Error(), "--env-file: ") || !strings.Contains(err.Error(), "1 bytes") {
		t.Errorf("ReadField over the limit: err = %v, want it to name the field and the limit", err)
	}
}

// TestReadFileSparse: a 4 GiB sparse file is refused from its size alone, without reading it.
func TestReadFileSparse(t *testing.T) {
	p := boundedreadtest.Sparse(t, filepath.Join(t.TempDir(), "sparse"))
	within(t, func() {
		if _, err := ReadFile(p, DefaultLimit); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "64 MiB") {
			t.Errorf("err = %v, want ErrTooLarge naming 64 MiB", err)
		}
	})
}

// TestReadFileNotRegular: a FIFO (with no writer), a directory, a character device and a socket
// are refused promptly, naming the kind of file.
func TestReadFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := boundedreadtest.FIFO(t, filepath.Join(dir, "fifo"))
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{fifo: "named pipe", link: "named pipe", dir: "directory", "/dev/zero": "character device", sock: "socket"} {
		within(t, func() {
			_, err := ReadFile(path, DefaultLimit)
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
				t.Errorf("%s: err = %v, want ErrNotRegular naming %q", path, err, want)
			}
			if f, err := Open(path, -1); err == nil {
				f.Close()
				t.Errorf("%s: Open succeeded", path)
			}
		})
	}
}
