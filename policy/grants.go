package policy

// Grants are the groups the user has allowed for the current session. The
// zero value is ready to use. Grants is not safe for concurrent use.
type Grants struct {
	// Epoch numbers the session; Reset bumps it. A grant made in another
	// epoch is void, so a prompt answered after /new grants nothing.
	Epoch  uint64
	groups map[string]uint64 // group → epoch the grant was made in
}

// Grant allows group for the rest of the current epoch.
func (g *Grants) Grant(group string) { g.GrantIn(group, g.Epoch) }

// GrantIn allows group for the given epoch, typically the one in which the
// prompt was shown; if the session has been reset since, the grant is void.
func (g *Grants) GrantIn(group string, epoch uint64) {
	if g.groups == nil {
		g.groups = map[string]uint64{}
	}
	g.groups[group] = epoch
}

// Has reports whether group is granted in the current epoch. A nil *Grants
// has no grants.
func (g *Grants) Has(group string) bool {
	if g == nil {
		return false
	}
	e, ok := g.groups[group]
	return ok && e == g.Epoch
}

// Reset drops every grant and starts a new epoch (on /new).
func (g *Grants) Reset() {
	g.Epoch++
	g.groups = nil
}
