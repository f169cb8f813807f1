package service

import (
	"errors"
	"fmt"
	"os"

	"github.com/dprl/dprl/internal/boundedread"
	"github.com/dprl/dprl/internal/strictdecode"
)

// Tokens never come from a command line (a process's arguments are visible to every local
// user in ps and /proc/PID/cmdline): dprl serve and dprl client read them from the
// environment ($DPRL_ADMIN_TOKEN, $DPRL_CLIENT_TOKEN), from a tokens file (--tokens-file,
// readable by its owner only) or, for the server, from the data directory's tokens.json.

// Token environment variables.
const (
	EnvAdminToken  = "DPRL_ADMIN_TOKEN"
	EnvClientToken = "DPRL_CLIENT_TOKEN"
)

// ErrTokenOnCommandLine is the error of a token flag (--admin-token, --client-token): tokens
// are never taken from a command line.
var ErrTokenOnCommandLine = errors.New("tokens are never taken on the command line (every local user sees a process's arguments): " +
	"set $DPRL_ADMIN_TOKEN and $DPRL_CLIENT_TOKEN, or give --tokens-file FILE (JSON {\"admin\": …, \"client\": …}, mode 0600; " +
	"dprl serve's <data>/tokens.json is one)")

// ReadTokensFile reads a tokens file: JSON {"admin": …, "client": …} (either may be omitted
// for a client that needs only one), each token at least MinTokenLength characters. The file
// must be readable by its owner only (no group or other permission bits: mode 0600 or 0400);
// errors name the file and never quote a token.
func ReadTokensFile(path string) (Tokens, error) {
	var t Tokens
	fi, err := os.Stat(path)
	if err != nil {
		return t, fmt.Errorf("--tokens-file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return t, fmt.Errorf("--tokens-file %s: not a regular file", path)
	}
	if p := fi.Mode().Perm(); p&0o077 != 0 {
		return t, fmt.Errorf("--tokens-file %s: mode %04o lets other users read the tokens: chmod 600 %s", path, p, path)
	}
	b, err := boundedread.ReadFile(path, 1<<16)
	if err != nil {
		return t, fmt.Errorf("--tokens-file: %w", err)
	}
	if err := strictdecode.Decode(b, "json", &t); err != nil {
		return Tokens{}, fmt.Errorf("--tokens-file %s: not a tokens file (JSON {\"admin\": …, \"client\": …})", path)
	}
	if t.Admin == "" && t.Client == "" {
		return t, fmt.Errorf("--tokens-file %s: no token (keys admin, client)", path)
	}
	for _, f := range []struct{ name, v string }{{"admin", t.Admin}, {"client", t.Client}} {
		if f.v != "" && len(f.v) < MinTokenLength {
			return Tokens{}, fmt.Errorf("--tokens-file %s: %s: a token of at least %d characters", path, f.name, MinTokenLength)
		}
	}
	return t, nil
}

// TokensFromEnv returns the tokens of the environment ($DPRL_ADMIN_TOKEN, $DPRL_CLIENT_TOKEN;
// getenv is os.Getenv or a test's).
func TokensFromEnv(getenv func(string) string) Tokens {
	return Tokens{Admin: getenv(EnvAdminToken), Client: getenv(EnvClientToken)}
}
