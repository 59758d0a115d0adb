package cli

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
)

// findProject is the project named name, which the caller may see.
func (a *app) findProject(ctx context.Context, name string) (project, error) {
	api, err := a.client()
	if err != nil {
		return project{}, err
	}
	var list struct {
		Projects []project `json:"projects"`
	}
	q := url.Values{"filterBy": {"name==" + name}, "limit": {"500"}}
	if err := api.call(ctx, http.MethodGet, "/api/v1/org-unit/projects", q, nil, &list); err != nil {
		return project{}, err
	}
	for _, p := range list.Projects {
		if p.Name == name {
			return p, nil
		}
	}
	return project{}, notFound("no project named %q that you may see; \"arbiter projects\" lists yours", name)
}

// workloadRef is how a command names a workload: NAME with -p PROJECT (and -n NAMESPACE when
// the name is in several of the project's namespaces), or its id.
type workloadRef struct {
	namespace string
}

func (a *app) addWorkloadRefFlags(c *cobra.Command, r *workloadRef) {
	a.addProjectFlag(c)
	c.Flags().StringVarP(&r.namespace, "namespace", "n", "", "the namespace, when the name is in several of the project's namespaces")
}

// resolve finds the workload nameOrID names: an id directly, else the unfinished workload of
// that name in the project (finished ones when no unfinished one has it).
func (a *app) resolve(ctx context.Context, nameOrID string, r workloadRef) (workload, error) {
	api, err := a.client()
	if err != nil {
		return workload{}, err
	}
	if _, perr := uuid.Parse(nameOrID); perr == nil {
		var w workload
		if err := api.call(ctx, http.MethodGet, "/api/v1/workloads/"+nameOrID, nil, nil, &w); err != nil {
			return workload{}, err
		}
		return w, nil
	}
	proj := a.project()
	if proj == "" {
		return workload{}, usageError("say which project %s is in: -p PROJECT (or $ARBITER_PROJECT), or give its id", nameOrID)
	}
	filter := []string{"name==" + nameOrID, "projectName==" + proj}
	if r.namespace != "" {
		filter = append(filter, "namespace=="+r.namespace)
	}
	var found []workload
	for _, deleted := range []string{"false", "true"} {
		var list workloadList
		q := url.Values{"filterBy": {strings.Join(filter, ",")}, "deleted": {deleted}, "limit": {"50"}, "sortBy": {"createdAt"}, "sortOrder": {"desc"}}
		if err := api.call(ctx, http.MethodGet, "/api/v1/workloads", q, nil, &list); err != nil {
			return workload{}, err
		}
		if found = list.Workloads; len(found) > 0 {
			break
		}
	}
	if len(found) == 0 {
		where := "project " + proj
		if r.namespace != "" {
			where += ", namespace " + r.namespace
		}
		return workload{}, notFound("no workload named %s in %s that you may see; \"arbiter list -p %s\" lists them", nameOrID, where, proj)
	}
	var namespaces []string
	for _, w := range found {
		if !slices.Contains(namespaces, w.Namespace) {
			namespaces = append(namespaces, w.Namespace)
		}
	}
	if len(namespaces) > 1 {
		slices.Sort(namespaces)
		return workload{}, usageError("%s is in several namespaces of project %s: %s; say which with -n NAMESPACE, or give its id",
			nameOrID, proj, strings.Join(namespaces, ", "))
	}
	return found[0], nil // the newest of that name
}

// nativeKind is the submission route's kind of a native workload type ("" for another type).
func nativeKind(typ string) string {
	switch typ {
	case "Standard training":
		return "trainings"
	case "Workspace":
		return "workspaces"
	case "Distributed training":
		return "distributed"
	case "Custom inference":
		return "inferences"
	}
	return ""
}
