package workloads

import (
	"context"
	"errors"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
)

// This file is who sees which workloads and who may act on them (docs/security.md
// "Ownership").

// Visible is a workload the caller may see: its record, its project as an access scope, and
// the project when it still exists (nil for a workload without a project, or whose project
// was deleted: then only those who may read the whole system see it).
type Visible struct {
	Record  store.WorkloadRecord
	Scope   auth.Scope
	Project *store.Project
}

// Scope is what lists show the caller: everything to those who may read the whole system,
// else the workloads of the projects they hold a role in (directly or through their
// department), by project id. Workloads without a project, or whose project was deleted, are
// seen only system-wide.
func (s *Service) Scope(ctx context.Context, who auth.Identity) (store.WorkloadScope, error) {
	if auth.Allowed(who, auth.Read, auth.System) {
		return store.WorkloadScope{All: true}, nil
	}
	scope := store.WorkloadScope{Projects: []store.ProjectRef{}}
	if len(who.Grants) == 0 || s.records == nil {
		return scope, nil
	}
	refs, err := s.records.ProjectRefs(ctx)
	if err != nil {
		return scope, err
	}
	for _, p := range refs {
		if auth.Allowed(who, auth.Read, auth.Project(p.ID.String(), p.DepartmentID.String())) {
			scope.Projects = append(scope.Projects, p)
		}
	}
	return scope, nil
}

// ProjectOf is a workload's project as an access scope, with the project when it still
// exists. The project is the one with the record's project id, whatever its name is now; the
// name the record holds decides nothing.
func (s *Service) ProjectOf(ctx context.Context, r store.WorkloadRecord) (auth.Scope, *store.Project, error) {
	if r.ProjectID == nil {
		return auth.System, nil, nil
	}
	p, err := s.records.Project(ctx, *r.ProjectID)
	if errors.Is(err, store.ErrNotFound) {
		return auth.System, nil, nil
	}
	if err != nil {
		return auth.Scope{}, nil, err
	}
	return auth.Project(p.ID.String(), p.DepartmentID.String()), &p, nil
}

// Visible is the workload with the id, and its project; a workload the caller may not see is
// answered like one that does not exist, as lists leave it out.
func (s *Service) Visible(ctx context.Context, who auth.Identity, id string) (Visible, error) {
	if s.records == nil {
		return Visible{}, ErrNoRecords
	}
	r, err := s.records.WorkloadRecord(ctx, id)
	if err != nil {
		return Visible{Record: r}, err
	}
	scope, p, err := s.ProjectOf(ctx, r)
	if err != nil {
		return Visible{Record: r, Scope: scope}, err
	}
	if !auth.Allowed(who, auth.Read, scope) {
		return Visible{Record: r, Scope: scope}, store.NotFound("workload %s was not found", id)
	}
	return Visible{Record: r, Scope: scope, Project: p}, nil
}

// SubmitterOf is how a workload records who submitted it: a person's subject (their user
// name, or "issuer subject" for OIDC), anything else (an API key) prefixed with its kind so
// that a key never passes for a person of the same name.
func SubmitterOf(id auth.Identity) string {
	if id.SubjectType == "user" {
		return id.Subject
	}
	return id.SubjectType + ":" + id.Subject
}

// authorize refuses the action at scope unless the caller's role allows it (auth.Refuse, the
// sentences web's refusals have too); what says what the action is.
func authorize(who auth.Identity, action auth.Action, scope auth.Scope, what string) error {
	switch r := auth.Refuse(who, action, scope, what); {
	case r == nil:
		return nil
	case r.SignIn:
		return store.Unauthenticated("%s", r.Sentence)
	default:
		return store.Forbidden("%s", r.Sentence)
	}
}

// MayChangeAny refuses a caller whose role changes no workload anywhere (a viewer).
func MayChangeAny(who auth.Identity) error {
	if !auth.AllowedSomewhere(who, auth.EditAnyWorkload) && !auth.AllowedSomewhere(who, auth.EditOwnWorkload) {
		return authorize(who, auth.EditAnyWorkload, auth.System, "change workloads' priority or preemptibility")
	}
	return nil
}

// MayControlAny refuses a caller whose role deletes, stops or runs no workload anywhere (a
// viewer), before anything is looked up.
func MayControlAny(who auth.Identity) error {
	if !auth.AllowedSomewhere(who, auth.EditAnyWorkload) && !auth.AllowedSomewhere(who, auth.EditOwnWorkload) {
		return authorize(who, auth.EditAnyWorkload, auth.System, "delete, stop or run workloads")
	}
	return nil
}

// MaySubmitAny refuses a caller whose role submits nowhere (a viewer).
func MaySubmitAny(who auth.Identity) error {
	if !auth.AllowedSomewhere(who, auth.SubmitWorkload) {
		return authorize(who, auth.SubmitWorkload, auth.System, "submit workloads")
	}
	return nil
}

// mayActOn says why the caller may not act on this workload (nil: they may): roles that edit
// any workload of its project may; a researcher only on the workloads they submitted. verb
// says what ("change", "delete", "stop"), what the action for the generic refusal.
func mayActOn(who auth.Identity, r store.WorkloadRecord, scope auth.Scope, verb, what string) error {
	own := r.Submitter != "" && r.Submitter == SubmitterOf(who)
	if auth.Allowed(who, auth.EditAnyWorkload, scope) || (own && auth.Allowed(who, auth.EditOwnWorkload, scope)) {
		return nil
	}
	if auth.Allowed(who, auth.EditOwnWorkload, scope) {
		if r.Submitter == "" {
			return store.Forbidden("researchers may %s only their own workloads, and %s was not submitted through Arbiter, so it has no submitter; ask a research manager of project %s", verb, r.Name, r.ProjectName)
		}
		return store.Forbidden("researchers may %s only their own workloads, and %s was submitted by %s; ask them or a research manager of project %s", verb, r.Name, r.Submitter, r.ProjectName)
	}
	return authorize(who, auth.EditAnyWorkload, scope, what)
}

// MayChange says why the caller may not change this workload's priority or preemptibility
// (nil: they may): the role at the workload's project, or that it has finished.
func MayChange(who auth.Identity, r store.WorkloadRecord, scope auth.Scope) error {
	if err := mayActOn(who, r, scope, "change", "change this workload's priority or preemptibility"); err != nil {
		return err
	}
	if r.FinishedAt != nil {
		return store.Conflict("workload %s finished at %s; its priority and preemptibility can no longer change", r.Name, r.FinishedAt.UTC().Format(time.RFC3339))
	}
	return nil
}
