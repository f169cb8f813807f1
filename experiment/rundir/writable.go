package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckWritable checks that the run directory out can be written, before any compute and
// without creating it: if it exists it must be a writable directory; otherwise its nearest
// existing ancestor must be a writable directory. Writability is probed by creating and removing
// a temporary file (permission bits alone are wrong for root and for read-only mounts). Errors
// name out (not the flag that gave it).
func CheckWritable(out string) error {
	if out == "" {
		return fmt.Errorf("must not be empty")
	}
	p := filepath.Clean(out)
	for {
		st, err := os.Stat(p)
		if err == nil {
			if !st.IsDir() {
				if p == filepath.Clean(out) {
					return fmt.Errorf("%s exists and is not a directory", out)
				}
				return fmt.Errorf("%s: %s is not a directory", out, p)
			}
			f, err := os.CreateTemp(p, ".dprl-probe-*")
			if err != nil {
				return fmt.Errorf("%s: cannot write in %s: %v", out, p, errors.Unwrap(err))
			}
			name := f.Name()
			f.Close()
			os.Remove(name)
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fmt.Errorf("%s: %s: %v", out, p, err)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return fmt.Errorf("%s: no existing ancestor directory", out)
		}
		p = parent
	}
}
