package policy

// Answer is the user's reply to a permission prompt. A deny may come with
// the user's reason; policy does not keep it: the caller passes it to the
// model along with the denial, so the model can change course.
type Answer int

// The answers a prompt offers.
const (
	AnswerOnce    Answer = iota + 1 // allow this call
	AnswerSession                   // allow the tool's group for the session
	AnswerAlways                    // allow the group from now on (persisted)
	AnswerDeny                      // deny this call, maybe with a reason; the turn goes on
	AnswerCancel                    // deny this call and cancel the turn
)

// Apply records answer a to the prompt for t and returns the verdict for the
// call. When persist is not nil the caller must save it as t.Group's policy.
// Session and always grants never cover a destructive tool: it asks again
// next time. An unrecognised answer denies.
func Apply(a Answer, t Tool, g *Grants) (persist *GroupPolicy, verdict Verdict) {
	switch a {
	case AnswerOnce:
		return nil, Allow
	case AnswerSession:
		grant(g, t)
		return nil, Allow
	case AnswerAlways:
		grant(g, t)
		p := PolicyAlways
		return &p, Allow
	}
	return nil, Deny
}

func grant(g *Grants, t Tool) {
	if g != nil && !t.Risk.destructive() {
		g.Grant(t.Group)
	}
}
