package tabular

// The practical UCB planner recomputes its policy only when the release changes (noiseUCB.Plan
// returns at once for the release it last planned from), so its servers tell the publisher
// which release their policy comes from (plannedFrom) and an unchanged policy is published
// without comparing its H·S actions. The posterior-sampling planner draws a new model at every
// call: its policies are compared as before.

// planned returns the number of users of the release the policy was last computed from and
// whether it is known (false before the first plan and after a failed one).
func (u *noiseUCB) planned() (int, bool) { return u.version, u.version >= 0 }

// plannedOf returns what planner p knows of the release its policy comes from.
func plannedOf(p ReleasePlanner) (int, bool) {
	if q, ok := p.(interface{ planned() (int, bool) }); ok {
		return q.planned()
	}
	return 0, false
}

func (c *practicalCuratorServer) plannedFrom() (int, bool) { return plannedOf(c.planner) }

func (l *practicalLDPServer) plannedFrom() (int, bool) { return plannedOf(l.planner) }
