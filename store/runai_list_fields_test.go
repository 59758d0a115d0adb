package store_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
)

// Run:ai's organization lists filter and sort by the department as a project's parent, by the
// one cluster's id and by the deserved GPUs summed over pools (totalGpuQuota); Arbiter's lists
// answer those names in SQL like their own.
func TestRunAIListFieldsFilterAndSortOrganizationUnits(t *testing.T) {
	st, _, dept, alpha := orgFixture(t)
	ctx := context.Background()
	beta, err := st.CreateProject(ctx, store.ProjectUpdate{Name: set("beta"), DepartmentID: set(dept.ID),
		Resources: set([]store.QuotaInput{quota("a100", 4, 4)})}, operator)
	if err != nil {
		t.Fatal(err)
	}
	other, err := st.CreateDepartment(ctx, store.DepartmentUpdate{Name: set("product"), Resources: set([]store.QuotaInput{quota("a100", 2, -1)})}, operator)
	if err != nil {
		t.Fatal(err)
	}
	gamma, err := st.CreateProject(ctx, store.ProjectUpdate{Name: set("gamma"), DepartmentID: set(other.ID)}, operator)
	if err != nil {
		t.Fatal(err)
	}
	projects := func(raw string) []string {
		t.Helper()
		v, _ := url.ParseQuery(raw)
		q, err := listquery.Parse(v, store.ProjectSpec)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		ps, _, err := st.Projects(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var names []string
		for _, p := range ps {
			names = append(names, p.Name)
		}
		return names
	}
	for raw, want := range map[string][]string{
		"filterBy=parentName==research":                            {alpha.Name, beta.Name},
		"filterBy=parentId==" + other.ID.String():                  {gamma.Name},
		"filterBy=clusterId==" + store.DefaultClusterID.String():   {alpha.Name, beta.Name, gamma.Name},
		"filterBy=clusterId==00000000-0000-4000-8000-000000000001": nil,
		"filterBy=totalGpuQuota>=4":                                {alpha.Name, beta.Name},
		"sortBy=totalGpuQuota":                                     {gamma.Name, beta.Name, alpha.Name},
	} {
		if d := cmp.Diff(want, projects(raw)); d != "" {
			t.Errorf("%s (-want +got):\n%s", raw, d)
		}
	}

	if byParent := projects("sortBy=parentName"); len(byParent) != 3 || byParent[0] != gamma.Name {
		t.Errorf("projects by parent name are %v, want gamma (of product) before research's", byParent)
	}

	v, _ := url.ParseQuery("filterBy=totalGpuQuota<=2")
	q, err := listquery.Parse(v, store.DepartmentSpec)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := st.Departments(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].Name != "product" {
		t.Errorf("departments with at most 2 deserved GPUs: %v, want product", ds)
	}
}

// Run:ai's fields that Arbiter does not store (a project's phase, live allocation, usage
// averages) are refused with why, not as unknown names.
func TestRunAIListFieldsArbiterDoesNotKeepAreRefusedWithWhy(t *testing.T) {
	for spec, raws := range map[*listquery.Spec][]string{
		&store.ProjectSpec:    {"filterBy=phase==Ready", "filterBy=gpuAllocated>=1", "sortBy=avgGpuUtilization7d"},
		&store.DepartmentSpec: {"filterBy=avgGpuAllocation24h>=1"},
		&store.NodePoolSpec:   {"filterBy=phase==Ready", "sortBy=swapEnabled"},
	} {
		for _, raw := range raws {
			v, _ := url.ParseQuery(raw)
			if _, err := listquery.Parse(v, *spec); err == nil || !listquery.IsError(err) || !strings.Contains(err.Error(), "not available here yet") {
				t.Errorf("%s: %v, want a refusal saying why", raw, err)
			}
		}
	}
}
