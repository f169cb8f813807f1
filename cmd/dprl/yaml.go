package main

import (
	"go.yaml.in/yaml/v3"

	"github.com/dprl/dprl/experiment"
)

// yamlRoundTrip serialises a flag-built config so that it goes through the same parser (and
// the same validation and defaults) as a config file.
func yamlRoundTrip(c *experiment.Config) ([]byte, error) { return yaml.Marshal(c) }
