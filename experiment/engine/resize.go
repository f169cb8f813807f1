package engine

// ResizeConfig is the Resize (Resizer) of a family or suite whose block is one configuration C:
// it decodes block with parse, sets the seeds field and every K field that fields returns for
// the configuration to newSeeds and episodes (ResizeFields) and returns the block validated
// (EditConfig).
func ResizeConfig[C Validator](block []byte, parse func([]byte) (C, error), episodes int, newSeeds []uint64, fields func(C) (seeds *[]uint64, ks []*int)) ([]byte, error) {
	return EditConfig(block, parse, func(cfg C) error {
		seeds, ks := fields(cfg)
		ResizeFields(episodes, newSeeds, seeds, ks...)
		return nil
	})
}
