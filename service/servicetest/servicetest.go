// Package servicetest holds what the tests of dprl serve, of its client and of the dprl command
// share: the reference curator, an uninterrupted curator that a served experiment's durable log
// (or a user's first policy) is checked against.
package servicetest

import (
	"bytes"
	"fmt"

	"github.com/dprl/dprl/agents/protocol"
)

// Curator is an uninterrupted curator: a served session fed reports in order. Rules holds the
// wire form (protocol.EncodeRule) of every version it published, Last its latest version and
// Received the number of reports it took.
type Curator struct {
	Session  protocol.Session
	Rules    map[uint64][]byte
	Last     uint64
	Received int
}

// NewCurator returns the curator of the session s after its first publication (a server
// publishes once when it creates an experiment).
func NewCurator(s protocol.Session) (*Curator, error) {
	c := &Curator{Session: s, Rules: map[uint64][]byte{}}
	if err := c.Publish(); err != nil {
		return nil, err
	}
	return c, nil
}

// Receive decodes a report's wire bytes (as logged), has the curator receive it, and
// publishes.
func (c *Curator) Receive(report []byte) error {
	rep, err := protocol.Decode(report, c.Session.Expect())
	if err != nil {
		return err
	}
	if err := c.Session.Receive(rep); err != nil {
		return err
	}
	c.Received++
	return c.Publish()
}

// Publish records the curator's current version and the wire form of its rule. A version
// published again must come with the same rule: otherwise Publish returns an error.
func (c *Curator) Publish() error {
	v, rule, err := c.Session.Publish()
	if err != nil {
		return err
	}
	b, err := protocol.EncodeRule(rule)
	if err != nil {
		return err
	}
	if w, ok := c.Rules[v]; ok && !bytes.Equal(w, b) {
		return fmt.Errorf("the reference curator's version %d changed", v)
	}
	c.Rules[v], c.Last = b, v
	return nil
}

// Rule is the wire form of the rule of the latest version.
func (c *Curator) Rule() []byte { return c.Rules[c.Last] }
