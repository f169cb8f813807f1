package engine

// EditConfig decodes a configuration block with parse, applies edit to it and returns it
// validated, as a YAML block (MarshalValid): the edit of a Resizer or an Optioner.
func EditConfig[C Validator](block []byte, parse func([]byte) (C, error), edit func(C) error) ([]byte, error) {
	cfg, err := parse(block)
	if err != nil {
		return nil, err
	}
	if err := edit(cfg); err != nil {
		return nil, err
	}
	return MarshalValid(cfg)
}

// EditBlock edits a block of a family with the named suite n: a block of the suite with suite
// (NamedSuite.Edit), any other as EditConfig does with parse and edit.
func EditBlock[C Validator](n NamedSuite, block []byte, suite func([]byte) ([]byte, error), parse func([]byte) (C, error), edit func(C) error) ([]byte, error) {
	return n.Edit(block, suite, func(block []byte) ([]byte, error) {
		return EditConfig(block, parse, edit)
	})
}
