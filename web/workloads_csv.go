package web

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/workloads"
	"github.com/labstack/echo/v4"
)

// The Workloads CSV export is written as it is read: a page of csvPageRows rows at a time,
// each page a query of its own under the store's deadline and read by key, so memory stays
// one page whatever the count. The server's write timeout (server/serve.go) is extended for
// this answer to csvExportDeadline, so a long export is not cut off, but no export holds its
// connection longer than that. At most csvExportSlots exports run at once in the server; a
// further one is refused at once (429 with Retry-After) rather than queued.
const (
	csvPageRows       = 1000
	csvExportDeadline = 5 * time.Minute
	csvExportSlots    = 2
	csvRetryAfter     = 10 // seconds
)

// workloadsCSV is the page's rows (the same filters and order) as CSV, all pages, streamed.
func (h *workloadRecords) workloadsCSV(c echo.Context) error {
	if !h.service.HasRecords() {
		return workloads.ErrNoRecords
	}
	params := cloneValues(c.QueryParams())
	params.Del("offset")
	q, f, err := workloadPageQuery(params)
	if err != nil {
		return err
	}
	scope, err := h.service.Scope(c.Request().Context(), identity(c))
	if err != nil {
		return err
	}
	if h.exports != nil {
		select {
		case h.exports <- struct{}{}:
			defer func() { <-h.exports }()
		default:
			c.Response().Header().Set("Retry-After", strconv.Itoa(csvRetryAfter))
			return &httpError{status: http.StatusTooManyRequests,
				message: fmt.Sprintf("%d CSV exports are already running; try again in %d seconds.", csvExportSlots, csvRetryAfter)}
		}
	}
	ctx := c.Request().Context()
	// The first page is read before anything is written, so a refusal (a bad filter, the
	// database down) is still an error page rather than a cut-off file.
	list, next, err := h.service.Walk(ctx, scope, q, f.Finished, nil, csvPageRows)
	if err != nil {
		return err
	}
	res := c.Response()
	rc := http.NewResponseController(res)
	_ = rc.SetWriteDeadline(time.Now().Add(csvExportDeadline)) // unsupported: the server's own timeout stays
	res.Header().Set(echo.HeaderContentDisposition, `attachment; filename="workloads.csv"`)
	res.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	res.WriteHeader(http.StatusOK)
	w := csv.NewWriter(res)
	if err := w.Write([]string{"id", "name", "namespace", "type", "project", "department", "priority", "preemptible", "phase", "reason",
		"queuePosition", "requestedGpus", "allocatedGpus", "nodePool", "createdAt", "finishedAt", "submitter"}); err != nil {
		return err
	}
	now := time.Now()
	for {
		for _, r := range list {
			v := workloadView(r, now)
			pos, fin := "", ""
			if v.QueuePosition != nil {
				pos = strconv.Itoa(*v.QueuePosition)
			}
			if v.FinishedAt != nil {
				fin = v.FinishedAt.Format(time.RFC3339)
			}
			t := csvText
			if err := w.Write([]string{v.ID, t(v.Name), t(v.Namespace), t(v.Type), t(v.ProjectName), t(v.DepartmentName), t(v.PriorityName),
				strconv.FormatBool(v.Preemptible), t(v.Phase), t(v.Reason), pos, strconv.Itoa(v.RequestedGPUs), strconv.Itoa(v.AllocatedGPUs),
				t(v.NodePool), v.CreatedAt.Format(time.RFC3339), fin, t(v.Submitter)}); err != nil {
				return err
			}
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return err // the client went away
		}
		_ = rc.Flush()
		if next == nil {
			return nil
		}
		if list, next, err = h.service.Walk(ctx, scope, q, f.Finished, next, csvPageRows); err != nil {
			// The status is sent: the file ends short, and the log says why.
			h.log.Error("workloads CSV export cut short", "err", err)
			return nil
		}
	}
}

// csvText is a text cell as a spreadsheet will not read it as a formula (OWASP "CSV
// injection"): one that starts with = + - @, a tab or a carriage return gets a leading
// single quote. Names, messages and the submitter come from Kubernetes objects anyone who
// may submit work writes. Number columns are written as they are, so -5 stays a number.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
