package store

import (
	"context"
	"errors"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// SystemNamespaces are Kubernetes' own namespaces: no project may claim them.
var SystemNamespaces = []string{"kube-system", "kube-public", "kube-node-lease", "default"}

// DefaultMaxNamespacesPerProject bounds how many namespaces one project may own.
const DefaultMaxNamespacesPerProject = 20

// NamespaceRules are what the operator allows projects to claim (docs/organization.md
// "Rules and their answers"): no namespace in Reserved or Own, and at most MaxPerProject each.
type NamespaceRules struct {
	Reserved      []string // namespaces no project may own (by default SystemNamespaces)
	Own           string   // Arbiter's own namespace, the release's; "" when not known
	MaxPerProject int      // <= 0: DefaultMaxNamespacesPerProject
}

// DefaultNamespaceRules reserves the system namespaces and bounds each project to
// DefaultMaxNamespacesPerProject.
func DefaultNamespaceRules() NamespaceRules {
	return NamespaceRules{Reserved: slices.Clone(SystemNamespaces), MaxPerProject: DefaultMaxNamespacesPerProject}
}

// SetNamespaceRules makes r the rules of every later project change.
func (s *Store) SetNamespaceRules(r NamespaceRules) {
	r.Reserved = slices.Clone(r.Reserved)
	s.nsRules.Store(&r)
}

// NamespaceRules are the rules project changes are checked against.
func (s *Store) NamespaceRules() NamespaceRules {
	if r := s.nsRules.Load(); r != nil {
		return *r
	}
	return DefaultNamespaceRules()
}

func (r NamespaceRules) max() int {
	if r.MaxPerProject <= 0 {
		return DefaultMaxNamespacesPerProject
	}
	return r.MaxPerProject
}

// whyReserved is why ns may not be claimed, or "" when it may.
func (r NamespaceRules) whyReserved(ns string) string {
	switch {
	case ns == r.Own:
		return "Arbiter's own namespace"
	case !slices.Contains(r.Reserved, ns):
		return ""
	case slices.Contains(SystemNamespaces, ns):
		return "a Kubernetes system namespace"
	}
	return "reserved by the operator (--reserved-namespaces)"
}

// CheckNamespaces is the one decision on a project's list of namespaces, whoever asks (the
// API, the console's forms): a refusal is an *Error of kind ErrInvalid on field "namespaces".
// It does not look at other projects; claimNamespaces does, in the change's transaction.
func (r NamespaceRules) CheckNamespaces(list []string) error {
	if n := len(list); n > r.max() {
		return InvalidField("namespaces", "a project has at most %d namespaces; this asks for %d", r.max(), n)
	}
	seen := map[string]bool{}
	for _, ns := range list {
		if err := ValidNamespace(ns); err != nil {
			return err
		}
		if seen[ns] {
			return InvalidField("namespaces", "namespace %s appears more than once in namespaces", ns)
		}
		seen[ns] = true
		if why := r.whyReserved(ns); why != "" {
			return InvalidField("namespaces", "namespace %s is %s; a project may not claim it", ns, why)
		}
	}
	return nil
}

// ValidNamespace refuses a name Kubernetes does not accept as a namespace's.
func ValidNamespace(ns string) error {
	if len(ns) > 63 || !dnsLabel.MatchString(ns) {
		return InvalidField("namespaces", "namespace %q is not a valid Kubernetes namespace name; use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit", ns)
	}
	return nil
}

// claimNamespaces makes list project id's namespaces, once rules allow it and no other
// project owns any of them. The owner is named only when by may read it
// (Actor.MayReadProject); otherwise the refusal says "another project".
func claimNamespaces(ctx context.Context, tx pgx.Tx, rules NamespaceRules, id uuid.UUID, list []string, by Actor) error {
	if err := rules.CheckNamespaces(list); err != nil {
		return err
	}
	var ns, other string
	var otherID, otherDept uuid.UUID
	err := tx.QueryRow(ctx, `
		SELECT n.namespace, p.name, p.id, p.department_id FROM project_namespaces n JOIN projects p ON p.id = n.project_id
		WHERE n.namespace = ANY($1) AND n.project_id <> $2 ORDER BY n.namespace LIMIT 1`, list, id).Scan(&ns, &other, &otherID, &otherDept)
	if err == nil {
		if by.MayReadProject != nil && by.MayReadProject(otherID, otherDept) {
			return ConflictField("namespaces", "namespace %s already belongs to project %s; a namespace belongs to at most one project", ns, other)
		}
		return ConflictField("namespaces", "namespace %s already belongs to another project; a namespace belongs to at most one project", ns)
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM project_namespaces WHERE project_id = $1`, id); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO project_namespaces (namespace, project_id) SELECT unnest($1::text[]), $2`, list, id)
	return err
}
