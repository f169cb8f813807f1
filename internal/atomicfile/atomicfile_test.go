package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// listDir returns the names of the entries of dir.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}

// writeThen returns a write function that writes s and then returns then (or the write's
// error).
func writeThen(s string, then error) func(w io.Writer) error {
	return func(w io.Writer) error {
		if _, err := io.WriteString(w, s); err != nil {
			return err
		}
		return then
	}
}

func TestWriteFile(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name     string
		existing *string // contents of a pre-existing file at path, if any
		write    func(w io.Writer) error
		perm     os.FileMode
		wantErr  error // nil means success expected
		want     string
	}{
		{
			name:  "create new file",
			write: writeThen("hello\n", nil),
			perm:  0o640,
			want:  "hello\n",
		},
		{
			name:     "replace existing file",
			existing: ptr("old contents"),
			write:    writeThen("new", nil),
			perm:     0o600,
			want:     "new",
		},
		{
			name: "large write through buffer",
			write: func(w io.Writer) error {
				for i := 0; i < 10000; i++ {
					if _, err := io.WriteString(w, "0123456789"); err != nil {
						return err
					}
				}
				return nil
			},
			perm: 0o644,
			want: strings.Repeat("0123456789", 10000),
		},
		{
			name:    "error in write leaves no file and no temp file",
			write:   writeThen("partial", errBoom),
			perm:    0o644,
			wantErr: errBoom,
		},
		{
			name:     "error in write leaves existing file untouched",
			existing: ptr("precious"),
			write:    writeThen(strings.Repeat("x", 1<<20), errBoom),
			perm:     0o600,
			wantErr:  errBoom,
			want:     "precious",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := withExisting(t, "out.txt", tc.existing, 0o644)
			err := WriteFile(path, tc.write, tc.perm)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("WriteFile error = %v, want %v", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("WriteFile: %v", err)
			}

			names := listDir(t, dir)
			wantFiles := 1
			if tc.wantErr != nil && tc.existing == nil {
				wantFiles = 0
			}
			if len(names) != wantFiles {
				t.Fatalf("directory holds %v, want %d file(s)", names, wantFiles)
			}
			if wantFiles == 0 {
				return
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("contents = %.40q (len %d), want %.40q (len %d)", got, len(got), tc.want, len(tc.want))
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			wantPerm := tc.perm
			if tc.wantErr != nil {
				wantPerm = 0o644 // the pre-existing file's mode
			}
			if runtime.GOOS != "windows" && fi.Mode().Perm() != wantPerm {
				t.Errorf("mode = %v, want %v", fi.Mode().Perm(), wantPerm)
			}
		})
	}
}

func TestWriteFilePanicCleansUp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	func() {
		defer func() {
			if recover() == nil {
				t.Error("panic was not propagated")
			}
		}()
		_ = WriteFile(path, func(io.Writer) error { panic("write panicked") }, 0o644)
	}()
	if names := listDir(t, dir); len(names) != 0 {
		t.Errorf("directory holds %v after panic, want nothing", names)
	}
}

func TestWriteFileInvalid(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		path  string
		write func(io.Writer) error
	}{
		{"nil write func", filepath.Join(dir, "a"), nil},
		{"missing directory", filepath.Join(dir, "no", "such", "dir", "a"), func(io.Writer) error { return nil }},
		{"path is a directory", dir + string(filepath.Separator), func(io.Writer) error { return nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := WriteFile(tc.path, tc.write, 0o644); err == nil {
				t.Fatal("WriteFile succeeded, want error")
			}
			if names := listDir(t, dir); len(names) != 0 {
				t.Errorf("directory holds %v, want nothing", names)
			}
		})
	}
}

func TestWriteFileOverDirectoryFails(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "sub")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(target, []byte("x"), 0o644); err == nil {
		t.Fatal("WriteBytes over a directory succeeded, want error")
	}
	names := listDir(t, dir)
	if len(names) != 1 || names[0] != "sub" {
		t.Errorf("directory holds %v, want only sub", names)
	}
	if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
		t.Errorf("target directory disturbed: %v, %v", fi, err)
	}
}

func TestWriteBytes(t *testing.T) {
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"text", []byte("a,b,c\n1,2,3\n")},
		{"binary", []byte{0, 1, 2, 255, 254}},
	}
	for _, write := range []struct {
		name string
		fn   func(string, []byte, os.FileMode) error
	}{{"sync", WriteBytes}, {"nosync", WriteBytesNoSync}} {
		for _, tc := range tests {
			t.Run(write.name+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "f.bin")
				if err := os.WriteFile(path, []byte("old contents"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := write.fn(path, tc.data, 0o644); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(tc.data) {
					t.Errorf("contents = %q, want %q", got, tc.data)
				}
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
					t.Errorf("mode = %v, %v; want 0644", fi.Mode(), err)
				}
				if names, _ := os.ReadDir(dir); len(names) != 1 {
					t.Errorf("directory holds %d entries, want only f.bin (temporary file left?)", len(names))
				}
			})
		}
	}
}

func ptr(s string) *string { return &s }

// withExisting returns a new directory and the path of name in it, where a file holding
// *existing (with perm) is written unless existing is nil.
func withExisting(t *testing.T, name string, existing *string, perm os.FileMode) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, name)
	if existing != nil {
		if err := os.WriteFile(path, []byte(*existing), perm); err != nil {
			t.Fatal(err)
		}
	}
	return dir, path
}

// TestCreateFileNeverReplaces: CreateFile writes a new file, refuses an existing one with
// fs.ErrExist leaving it untouched, and leaves no temporary file either way.
func TestCreateFileNeverReplaces(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing *string
		write    func(w io.Writer) error
		verify   func(tmp string) error
		wantErr  error
		want     string
	}{
		{name: "new file", write: writeThen("backup", nil), want: "backup"},
		{name: "existing file kept", existing: ptr("old"), write: writeThen("new", nil), wantErr: fs.ErrExist, want: "old"},
		{name: "failing write", write: writeThen("partial", errors.New("boom")), wantErr: errors.New("boom")},
		{name: "refused by verify", write: writeThen("bad", nil), verify: func(tmp string) error {
			if b, _ := os.ReadFile(tmp); string(b) == "bad" {
				return errors.New("verify: bad contents")
			}
			return nil
		}, wantErr: errors.New("verify")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := withExisting(t, "out", tc.existing, 0o600)
			err := CreateFile(path, tc.write, tc.verify, 0o600)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatal(err)
			case tc.wantErr != nil && err == nil:
				t.Fatalf("no error, want %v", tc.wantErr)
			case errors.Is(tc.wantErr, fs.ErrExist) && !errors.Is(err, fs.ErrExist):
				t.Fatalf("error %v, want fs.ErrExist", err)
			}
			got, rerr := os.ReadFile(path)
			if tc.want == "" {
				if rerr == nil {
					t.Fatalf("a failed write left %q", got)
				}
			} else if string(got) != tc.want {
				t.Fatalf("file holds %q, want %q", got, tc.want)
			}
			if names := listDir(t, dir); len(names) != 1 && tc.want != "" || len(names) != 0 && tc.want == "" {
				t.Fatalf("directory holds %v", names)
			}
		})
	}
}
