package toolgate

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/domo-agent/domo/policy"
)

// Prompt is what the user is asked about one call: everything needed to
// judge it, the exact arguments included.
type Prompt struct {
	Name   string // the catalogue name the model used
	Server string
	Tool   string // the server's own name for the tool
	Group  string
	Risk   policy.Risk
	Args   json.RawMessage
	Rule   string // why policy asks
}

// Prompter asks the user about a call policy could not decide alone. It
// returns the answer and, with a deny, the user's optional reason. An error
// (no terminal, input closed) counts as a deny.
type Prompter interface {
	Ask(ctx context.Context, p Prompt) (answer policy.Answer, reason string, err error)
}

// ErrNoTerminal is returned by a Prompter that has nobody to ask.
var ErrNoTerminal = errors.New("no terminal to ask on")
