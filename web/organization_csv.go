package web

import (
	"strconv"
	"strings"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/labstack/echo/v4"
)

// The CSV downloads of the Node pools, Departments and Projects pages: the page's list (what
// the caller may read, filtered and sorted as on the page), one row each.

func (s *Server) nodePoolsCSV(c echo.Context) error {
	q, err := pageQuery(c, store.NodePoolSpec)
	if err != nil {
		return err
	}
	pools, err := s.org.store.NodePools(c.Request().Context(), q)
	if err != nil {
		return err
	}
	rows := [][]string{{"id", "name", "labelKey", "labelValue", "placement", "nodes", "readyNodes", "gpus", "allocatedGpus"}}
	for _, p := range mapSlice(pools, s.nodePoolView) {
		rows = append(rows, []string{p.ID, p.Name, p.LabelKey, p.LabelValue, p.Placement, strconv.Itoa(p.Status.Nodes),
			strconv.Itoa(p.Status.ReadyNodes), strconv.Itoa(p.Status.GPUs), strconv.Itoa(p.Status.AllocatedGPUs)})
	}
	return writeCSV(c, "node-pools.csv", rows)
}

func (s *Server) departmentsCSV(c echo.Context) error {
	q, err := pageQuery(c, store.DepartmentSpec)
	if err != nil {
		return err
	}
	ds, err := s.visibleDepartments(c)(c.Request().Context(), q)
	if err != nil {
		return err
	}
	rows := [][]string{{"id", "name", "projects", "quotas", "allocated"}}
	for _, d := range ds {
		v := s.departmentView(d)
		rows = append(rows, []string{v.ID, v.Name, strconv.Itoa(v.ProjectCount), store.QuotaText(d.Quotas), strconv.Itoa(v.Status.Allocated)})
	}
	return writeCSV(c, "departments.csv", rows)
}

func (s *Server) projectsCSV(c echo.Context) error {
	var filters []string
	if d := c.QueryParam("department"); d != "" {
		filters = append(filters, "departmentName=="+d)
	}
	q, err := pageQuery(c, store.ProjectSpec, filters...)
	if err != nil {
		return err
	}
	q.Limit = listquery.MaxLimit
	ps, _, err := s.visibleProjects(c, q)
	if err != nil {
		return err
	}
	rows := [][]string{{"id", "name", "department", "namespaces", "quotas", "defaultPriority", "allowPriorityChange", "minPriority", "maxPriority",
		"preemptionOrder", "preemptionMode", "minRuntimeSeconds", "queueing", "allocated"}}
	for _, p := range ps {
		v := s.projectView(p)
		rows = append(rows, []string{v.ID, v.Name, v.DepartmentName, strings.Join(v.Namespaces, " "), store.QuotaText(p.Quotas),
			deref(p.DefaultPriorityName), strconv.FormatBool(p.AllowPriorityChange), deref(p.MinPriority), deref(p.MaxPriority),
			p.PreemptionOrder, p.PreemptionMode, strconv.Itoa(p.MinRuntimeSeconds), p.Queueing, strconv.Itoa(v.Status.Allocated)})
	}
	return writeCSV(c, "projects.csv", rows)
}
