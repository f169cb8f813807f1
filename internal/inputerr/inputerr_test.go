package inputerr

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

// TestInputError: New and Wrap mark bad input with the message unchanged, through further
// wrapping; other errors and nil are not bad input.
func TestInputError(t *testing.T) {
	e := New("--seeds: %w", io.EOF)
	if e.Error() != "--seeds: EOF" || !Is(e) || !errors.Is(e, io.EOF) {
		t.Errorf("New: %v, Is %v", e, Is(e))
	}
	if w := fmt.Errorf("run: %w", Wrap(io.EOF)); !Is(w) || w.Error() != "run: EOF" {
		t.Errorf("wrapped: %v", w)
	}
	if Is(io.EOF) || Is(nil) || Wrap(nil) != nil {
		t.Error("plain errors and nil must not be bad input")
	}
}
