package web

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// workloadTypeQuery reads the page's filters (search, category, externalTypesOnly) and
// sorting, using the API's list machinery so the page sorts and filters as the API does.
func workloadTypeQuery(c echo.Context) (listquery.Query, string, bool, error) {
	v := url.Values{}
	for _, k := range []string{"sortBy", "sortOrder", "search"} {
		if x := c.QueryParam(k); x != "" {
			v.Set(k, x)
		}
	}
	category := c.QueryParam("category")
	if category != "" && category != "none" {
		v.Set("filterBy", "categoryName=="+category)
	}
	q, err := listquery.Parse(v, store.WorkloadTypeSpec)
	if err != nil {
		return q, "", false, err
	}
	external, err := boolParam(c, "externalTypesOnly")
	return q, category, external, err
}

func (h *workloadProperties) workloadTypes(c echo.Context) ([]views.WorkloadType, listquery.Query, string, bool, error) {
	q, category, external, err := workloadTypeQuery(c)
	if err != nil {
		return nil, q, "", false, err
	}
	ts, err := h.props.WorkloadTypes(c.Request().Context(), q, external)
	if err != nil {
		return nil, q, "", false, err
	}
	out := make([]views.WorkloadType, 0, len(ts))
	for _, t := range ts {
		if category == "none" && t.CategoryID != nil {
			continue
		}
		out = append(out, workloadTypeView(t))
	}
	return out, q, category, external, nil
}

func (h *workloadProperties) workloadTypesPage(c echo.Context) error {
	types, q, category, external, err := h.workloadTypes(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	cats, err := h.props.Categories(ctx, listquery.Query{SortBy: "name"})
	if err != nil {
		return err
	}
	prios, err := h.props.Priorities(ctx, listquery.Query{SortBy: "value"})
	if err != nil {
		return err
	}
	m := views.WorkloadTypesPage{
		Page:  h.page(c, "Workload types", "workload-types"),
		Types: types, Categories: mapSlice(cats, categoryView), Priorities: h.prios.views(prios),
		Search: q.Search, Category: category, ExternalOnly: external,
		CSVHref: pathTo(c, routenames.WorkloadTypesCSV) + "?" + c.QueryParams().Encode(),
		CanEdit: identity(c).Role == "admin",
		Columns: sortLinks(c, q,
			[][2]string{{"Name", "name"}, {"Group", "group"}, {"Category", "categoryName"}, {"Priority", "priorityName"}, {"Preemptibility", "preemptibility"}}),
	}
	return render(c, http.StatusOK, views.WorkloadTypesView(m))
}

// sortLinks builds the column headers: each links to the current URL sorted by its field,
// toggling the direction when it is already the sort field.
func sortLinks(c echo.Context, q listquery.Query, cols [][2]string) []views.SortLink {
	links := make([]views.SortLink, len(cols))
	for i, col := range cols {
		params := url.Values{}
		for k, vals := range c.QueryParams() {
			params[k] = vals
		}
		active := q.SortBy == col[1]
		params.Set("sortBy", col[1])
		params.Del("sortOrder")
		if active && !q.Desc {
			params.Set("sortOrder", "desc")
		}
		links[i] = views.SortLink{Label: col[0], Field: col[1], Href: c.Path() + "?" + params.Encode(), Active: active, Desc: q.Desc}
	}
	return links
}

func (h *workloadProperties) workloadTypesCSV(c echo.Context) error {
	types, _, _, _, err := h.workloadTypes(c)
	if err != nil {
		return err
	}
	rows := [][]string{{"id", "name", "group", "external", "category", "priority", "preemptibility", "effectivePriority", "effectivePreemptibility", "gangPolicy", "updatedAt", "updatedBy"}}
	for _, t := range types {
		rows = append(rows, []string{t.ID, t.Name, t.Group, strconv.FormatBool(t.External), views.Deref(t.CategoryName), views.Deref(t.PriorityName),
			views.Deref(t.Preemptibility), t.EffectivePriorityName, t.EffectivePreemptibility, t.GangPolicy, t.UpdatedAt.Format("2006-01-02T15:04:05Z"), t.UpdatedBy})
	}
	return writeCSV(c, "workload-types.csv", rows)
}

// saveWorkloadTypeRow is the inline edit of one row: with htmx it answers the refreshed row
// (or the row with the reason the change was refused); without JavaScript it redirects back.
func (h *workloadProperties) saveWorkloadTypeRow(c echo.Context) error {
	id, err := changeTarget(c, "update", "workload-type")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	row := views.WorkloadTypeRow{CanEdit: identity(c).Role == "admin"}
	cats, err := h.props.Categories(ctx, listquery.Query{SortBy: "name"})
	if err != nil {
		return err
	}
	prios, err := h.props.Priorities(ctx, listquery.Query{SortBy: "value"})
	if err != nil {
		return err
	}
	row.Categories, row.Priorities = mapSlice(cats, categoryView), h.prios.views(prios)

	status := http.StatusOK
	updated, saveErr := h.saveWorkloadTypeForm(c, id)
	if saveErr != nil {
		current, err := h.props.WorkloadType(ctx, id)
		if err != nil {
			return err
		}
		updated = current
		status, row.Error = statusOf(saveErr)
	} else {
		row.Saved = true
	}
	row.Type = workloadTypeView(updated)
	if !isHTMX(c) {
		if saveErr != nil {
			return saveErr
		}
		return c.Redirect(http.StatusSeeOther, pathTo(c, routenames.WorkloadTypes))
	}
	return render(c, status, views.WorkloadTypeRowView(row))
}

func (h *workloadProperties) saveWorkloadTypeForm(c echo.Context, id uuid.UUID) (store.WorkloadType, error) {
	if err := requireAdmin(c, "change a workload type's defaults"); err != nil {
		return store.WorkloadType{}, err
	}
	form := func(name string) optional[string] {
		v := c.FormValue(name)
		if v == "" {
			return optional[string]{Set: true, Null: true}
		}
		return optional[string]{Set: true, Value: v}
	}
	req := workloadTypeRequest{CategoryID: form("categoryId"), PriorityID: form("priorityId"), Preemptibility: form("preemptibility")}
	if _, ok := c.Request().PostForm["categoryId"]; !ok {
		req.CategoryID = optional[string]{} // a form without the field leaves the category as it is
	}
	u, err := workloadTypeUpdate(req)
	if err != nil {
		return store.WorkloadType{}, err
	}
	return h.props.UpdateWorkloadType(c.Request().Context(), id, u, actor(c))
}

func (h *workloadProperties) prioritiesPage(c echo.Context) error {
	ps, q, err := queryList(c, store.PrioritySpec, h.props.Priorities)
	if err != nil {
		return err
	}
	m := views.PrioritiesPage{
		Page:       h.page(c, "Priorities", "priorities"),
		Priorities: h.prios.views(ps),
		CSVHref:    pathTo(c, routenames.PrioritiesCSV) + "?" + c.QueryParams().Encode(),
		Columns:    sortLinks(c, q, [][2]string{{"Name", "name"}, {"Value", "value"}}),
	}
	return render(c, http.StatusOK, views.PrioritiesView(m))
}

func (h *workloadProperties) prioritiesCSV(c echo.Context) error {
	ps, _, err := queryList(c, store.PrioritySpec, h.props.Priorities)
	if err != nil {
		return err
	}
	rows := [][]string{{"id", "name", "value", "source", "clusterStatus"}}
	for _, p := range h.prios.views(ps) {
		rows = append(rows, []string{p.ID, p.Name, strconv.Itoa(p.Value), p.Source, p.ClusterStatus})
	}
	return writeCSV(c, "priorities.csv", rows)
}

func writeCSV(c echo.Context, filename string, rows [][]string) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.WriteAll(rows); err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+filename+`"`)
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
}
