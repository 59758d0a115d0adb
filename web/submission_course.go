package web

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/workloads"
)

// submissionCourse is what a submission route (a native kind's, Workloads V2's) does with its
// request, S being its prepared submission: the course through them is the same for both.
type submissionCourse[S any] struct {
	// prepare decodes the body and checks it against the project and its policy.
	prepare func(c echo.Context, ctx context.Context) (S, error)
	dryRun  func(ctx context.Context, who workloads.Caller, sub S) (scheduler.Prediction, error)
	submit  func(ctx context.Context, who workloads.Caller, sub S) (store.WorkloadRecord, error)
	// answer is the 202's body for the workload submitted.
	answer func(c echo.Context, sub S, rec store.WorkloadRecord) any
}

// run creates the workload (202, answer), or with ?dryRun=true answers what the scheduler
// would do with it (200, the Prediction; docs/api.md "Dry runs"). Either is audited under the
// workload, and only a caller who may submit somewhere gets as far as the body.
func (s submissionCourse[S]) run(c echo.Context) error {
	dry, err := boolParam(c, "dryRun")
	if err != nil {
		return err
	}
	target(c, map[bool]string{true: "dry-run", false: "create"}[dry], "workload", "")
	if err := workloads.MaySubmitAny(identity(c)); err != nil {
		return err
	}
	ctx := c.Request().Context()
	sub, err := s.prepare(c, ctx)
	if err != nil {
		return err
	}
	if dry {
		p, err := s.dryRun(ctx, caller(c), sub)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, NewPredictionJSON(p))
	}
	rec, err := s.submit(ctx, caller(c), sub)
	if err != nil {
		return err
	}
	target(c, "create", "workload", rec.UID)
	return c.JSON(http.StatusAccepted, s.answer(c, sub, rec))
}
