package protocol

import "encoding/json"

// UserSideChecker is implemented by the curators of locally private agents whose users check
// the public parameters a server publishes with its policy (UserSider) against their own. The
// user computes her randomiser's parameters herself from public parameters she knows and
// consents to (ε, δ, the public dimensions, the agent); published is the server's user_side
// (JSON, empty or null when none). A non-nil error names the parameter that would give her
// less noise or another layout than her own computation: she then sends no report.
type UserSideChecker interface {
	CheckUserSide(published json.RawMessage) error
}
