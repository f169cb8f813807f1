package cfgfile

import "fmt"

// Parse decodes data strictly into c (Decode; a decoding error is prefixed with what), then
// rejects the explicit zeros with reject, given the key paths present in the document (as a
// rule Keys.RejectExplicitZeros of c's fields that have a default), and finally checks c with
// check (defaults and Validate). It returns c, or nil and the first error.
func Parse[C any](data []byte, c *C, what string, reject func(Keys) error, check func() error) (*C, error) {
	keys, err := Decode(data, c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := reject(keys); err != nil {
		return nil, err
	}
	if err := check(); err != nil {
		return nil, err
	}
	return c, nil
}
