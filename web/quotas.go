package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// A quota list as the API sends it (quotaRequest) and as the pages' forms type it (one
// QuotaCell per node pool).

type quotaRequest struct {
	NodePool struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"nodePool"`
	GPU struct {
		Deserved        *int `json:"deserved" range:"0,2147483647"`
		Limit           *int `json:"limit" range:"-1,2147483647"`
		OverQuotaWeight *int `json:"overQuotaWeight" range:"0,2147483647"`
	} `json:"gpu"`
}

// Nested objects decode strictly too: optional[T] decodes its value with encoding/json's
// defaults, which would let unknown fields through.

func (q *quotaRequest) UnmarshalJSON(b []byte) error {
	type plain quotaRequest
	return strictObject(b, (*plain)(q), "a quota", "nodePool {id, name}", "gpu {deserved, limit, overQuotaWeight}")
}

func (p *policyRequest) UnmarshalJSON(b []byte) error {
	type plain policyRequest
	return strictObject(b, (*plain)(p), "policy", "defaultPriorityId", "allowPriorityChange", "allowPreemptibilityChange", "minPriority", "maxPriority",
		"preemptionOrder", "preemptionMode", "minRuntimeSeconds", "queueing")
}

func strictObject(b []byte, dst any, what string, accepted ...string) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	if name, ok := strings.CutPrefix(fmt.Sprint(err), "json: unknown field "); ok {
		return &fieldError{msg: fmt.Sprintf("unknown field %s in %s; it accepts: %s", name, what, strings.Join(accepted, ", "))}
	}
	return err
}

// quotaInputs turns a quota list into the store's form: a pool by id (checked to be a UUID)
// or by name; absent numbers are 0 deserved, no limit and weight 2.
func quotaInputs(in []quotaRequest) ([]store.QuotaInput, error) {
	out := make([]store.QuotaInput, len(in))
	for i, q := range in {
		out[i] = store.QuotaInput{NodePoolName: q.NodePool.Name, Limit: q.GPU.Limit, OverQuotaWeight: q.GPU.OverQuotaWeight}
		if q.NodePool.ID != "" {
			id, err := uuid.Parse(q.NodePool.ID)
			if err != nil {
				return nil, badField("resources", "nodePool.id %q is not a valid id; ids are UUIDs such as %s", q.NodePool.ID, store.DefaultNodePoolID)
			}
			out[i].NodePoolID = &id
		}
		if q.GPU.Deserved != nil {
			out[i].Deserved = *q.GPU.Deserved
		}
	}
	return out, nil
}

func optionalQuotas(o optional[[]quotaRequest]) (store.Optional[[]store.QuotaInput], error) {
	if !o.Set {
		return store.Optional[[]store.QuotaInput]{}, nil
	}
	in, err := quotaInputs(o.Value) // null is an empty list: no quotas
	return store.Optional[[]store.QuotaInput]{Set: true, Value: &in}, err
}

func (o organization) poolRefs(ctx context.Context) ([]views.NodePoolRef, error) {
	pools, err := o.store.NodePools(ctx, listquery.Query{SortBy: "name"})
	return mapSlice(pools, func(p store.NodePool) views.NodePoolRef { return views.NodePoolRef{ID: p.ID.String(), Name: p.Name} }), err
}

// quotaCells lays a quota list out as one cell per node pool, with usage from status.
func quotaCells(pools []views.NodePoolRef, quotas []views.Quota, status views.OrgStatus) []views.QuotaCell {
	cells := make([]views.QuotaCell, len(pools))
	for i, p := range pools {
		cells[i] = views.QuotaCell{Pool: p}
		for _, q := range quotas {
			if q.NodePool.ID == p.ID {
				cells[i].Deserved, cells[i].Weight = strconv.Itoa(q.GPU.Deserved), strconv.Itoa(q.GPU.OverQuotaWeight)
				if q.GPU.Limit != store.NoLimit {
					cells[i].Limit = strconv.Itoa(q.GPU.Limit)
				}
			}
		}
		for _, u := range status.NodePools {
			if u.NodePool.ID == p.ID {
				cells[i].Usage = u.Usage
			}
		}
	}
	return cells
}

// formQuotas reads the create forms' quota inputs (deserved-<pool id>, limit-..., weight-...);
// a pool with an empty deserved field gets no quota.
func formQuotas(c echo.Context, pools []views.NodePoolRef) ([]views.QuotaCell, []store.QuotaInput, error) {
	cells := make([]views.QuotaCell, len(pools))
	var in []store.QuotaInput
	var firstErr error
	for i, p := range pools {
		cells[i] = views.QuotaCell{Pool: p, Deserved: c.FormValue("deserved-" + p.ID), Limit: c.FormValue("limit-" + p.ID), Weight: c.FormValue("weight-" + p.ID)}
		q, ok, err := quotaFromCell(cells[i])
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if ok {
			in = append(in, q)
		}
	}
	return cells, in, firstErr
}

// quotaFromCell parses one pool's quota as typed: empty deserved means no quota in the pool,
// empty limit no limit, empty weight the default 2.
func quotaFromCell(cell views.QuotaCell) (store.QuotaInput, bool, error) {
	id, err := uuid.Parse(cell.Pool.ID)
	if err != nil {
		return store.QuotaInput{}, false, badField("resources", "%q is not a valid node pool id", cell.Pool.ID)
	}
	q := store.QuotaInput{NodePoolID: &id}
	if strings.TrimSpace(cell.Deserved) == "" {
		return q, false, nil
	}
	num := func(what, raw string, lo int) (*int, error) {
		return formInt("resources", what+" in pool "+cell.Pool.Name, raw, lo, maxIntColumn)
	}
	d, err := num("deserved GPUs", cell.Deserved, 0)
	if err != nil {
		return q, false, err
	}
	q.Deserved = *d
	if q.Limit, err = num("limit", cell.Limit, -1); err != nil {
		return q, false, err
	}
	if q.OverQuotaWeight, err = num("over-quota weight", cell.Weight, 0); err != nil {
		return q, false, err
	}
	return q, true, nil
}

// replaceCell returns the quota list with pool's quota replaced by the one typed in the form.
func replaceCell(c echo.Context, pools []views.NodePoolRef, current []views.Quota, poolID string) ([]store.QuotaInput, error) {
	var in []store.QuotaInput
	for _, q := range current {
		if q.NodePool.ID == poolID {
			continue
		}
		cell := views.QuotaCell{Pool: q.NodePool, Deserved: strconv.Itoa(q.GPU.Deserved), Limit: strconv.Itoa(q.GPU.Limit), Weight: strconv.Itoa(q.GPU.OverQuotaWeight)}
		qi, _, err := quotaFromCell(cell)
		if err != nil {
			return nil, err
		}
		in = append(in, qi)
	}
	for _, p := range pools {
		if p.ID == poolID {
			q, ok, err := quotaFromCell(views.QuotaCell{Pool: p, Deserved: c.FormValue("deserved"), Limit: c.FormValue("limit"), Weight: c.FormValue("weight")})
			if err != nil {
				return nil, err
			}
			if ok {
				in = append(in, q)
			}
			return in, nil
		}
	}
	return nil, badField("resources", "%q is not a node pool", poolID)
}

// keepTyped puts what was typed back into a refused quota line, so the person can correct it.
func keepTyped(c echo.Context, cells []views.QuotaCell, poolID string) {
	for i := range cells {
		if cells[i].Pool.ID == poolID {
			cells[i].Deserved, cells[i].Limit, cells[i].Weight = c.FormValue("deserved"), c.FormValue("limit"), c.FormValue("weight")
		}
	}
}
