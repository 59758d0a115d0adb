package auth

// Refusal is why a caller may not take an action: SignIn when they have no credentials (else
// their role does not allow it), and the sentence that says so.
type Refusal struct {
	SignIn   bool
	Sentence string
}

// Refuse says why id may not take action at scope, what naming the action for the sentence
// ("submit workloads"); nil when a grant of id allows it. The HTTP layer and the workloads
// service both ask it, so that a refusal reads the same wherever it is made.
func Refuse(id Identity, action Action, scope Scope, what string) *Refusal {
	switch {
	case !id.Authenticated():
		return &Refusal{SignIn: true, Sentence: "sign in first to " + what}
	case Allowed(id, action, scope):
		return nil
	case action == ManageSystem:
		return &Refusal{Sentence: "only an admin may " + what}
	}
	return &Refusal{Sentence: "your role does not allow you to " + what + " here; ask an admin for access"}
}
