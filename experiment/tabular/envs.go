package tabular

import "github.com/dprl/dprl/experiment/tabular/tabenv"

// EnvConfig selects an environment of the family's registry (tabenv.Config).
type EnvConfig = tabenv.Config

// TabularEnvs is the tabular family's environment registry (package tabenv), shared by the
// papers' suite and dprl's practical suite.
type TabularEnvs = tabenv.Registry

// Envs returns the tabular family's environments (tabenv.New).
func Envs() *TabularEnvs { return tabenv.New() }
