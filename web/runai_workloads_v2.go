package web

import (
	"context"
	"net/http"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/workloads"
	"github.com/labstack/echo/v4"
	"k8s.io/utils/ptr"
)

// workloadsV2 is Run:ai's Workloads V2 (docs/api.md "Workloads V2"): a workload of any kind
// Arbiter schedules, submitted by its Kubernetes manifest, read back and deleted, with the
// native submissions' roles, policy, submitter, audit and dry run (the workloads service's
// PrepareManifest and the rest; what a manifest may hold is workloads/manifest_checks.go's).
type workloadsV2 struct {
	service *workloads.Service
}

func (h *workloadsV2) routes(r router) {
	r.apiV2.POST("/workloads", h.submit)
	r.apiV2.GET("/workloads/:id", h.get)
	r.apiV2.DELETE("/workloads/:id", h.delete)
}

// workloadV2Request is Run:ai's WorkloadV2CreateRequest.
type workloadV2Request struct {
	Metadata              workloadV2Metadata `json:"metadata"`
	Manifest              map[string]any     `json:"manifest"`
	ManifestBase64Encoded string             `json:"manifestBase64Encoded"`
}

// workloadV2Metadata is Run:ai's WorkloadV2MetadataCreateParams.
type workloadV2Metadata struct {
	Name                 string           `json:"name"`
	UseGivenNameAsPrefix bool             `json:"useGivenNameAsPrefix"`
	ProjectID            string           `json:"projectId"`
	ClusterID            optional[string] `json:"clusterId"`
	Priority             *string          `json:"priority"`
	Category             *string          `json:"category"`
	Preemptibility       *string          `json:"preemptibility"`
}

var workloadV2Accepted = []string{"metadata", "manifest", "manifestBase64Encoded"}

// decodeWorkloadV2 reads a Workloads V2 submission.
func decodeWorkloadV2(c echo.Context) (workloads.ManifestRequest, error) {
	var req workloadV2Request
	if err := decodeJSON(c, &req, workloadV2Accepted...); err != nil {
		return workloads.ManifestRequest{}, err
	}
	if err := checkClusterID(req.Metadata.ClusterID, clusterID(c)); err != nil {
		return workloads.ManifestRequest{}, badField("metadata.clusterId", "metadata.%s", err.Error())
	}
	m := req.Metadata
	return workloads.ManifestRequest{Name: m.Name, UseGivenNameAsPrefix: m.UseGivenNameAsPrefix, ProjectID: m.ProjectID,
		Priority: ptr.Deref(m.Priority, ""), Preemptibility: ptr.Deref(m.Preemptibility, ""), Category: ptr.Deref(m.Category, ""),
		Manifest: req.Manifest, ManifestBase64: req.ManifestBase64Encoded}, nil
}

// submit creates the manifest's workload (202, Run:ai's WorkloadV2), or with ?dryRun=true
// answers what the scheduler would do with it (200, as the native routes' dry run).
func (h *workloadsV2) submit(c echo.Context) error {
	return submissionCourse[workloads.ManifestSubmission]{
		prepare: func(c echo.Context, ctx context.Context) (workloads.ManifestSubmission, error) {
			req, err := decodeWorkloadV2(c)
			if err != nil {
				return workloads.ManifestSubmission{}, err
			}
			return h.service.PrepareManifest(ctx, identity(c), req)
		},
		dryRun: h.service.DryRunManifest,
		submit: h.service.SubmitManifest,
		answer: func(c echo.Context, sub workloads.ManifestSubmission, rec store.WorkloadRecord) any {
			obj := sub.Object.DeepCopy()
			obj.SetName(rec.Name) // with the suffix Arbiter added to a prefix
			m := workloads.Manifested{Visible: workloads.Visible{Record: rec, Project: &sub.Project}, Kind: sub.Kind, Object: obj}
			return workloadV2View(m, "Running", clusterID(c))
		},
	}.run(c)
}

func (h *workloadsV2) manifested(c echo.Context, read bool) (workloads.Manifested, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return workloads.Manifested{}, err
	}
	return h.service.SubmittedManifest(c.Request().Context(), identity(c), id.String(), read)
}

// get answers Run:ai's WorkloadV2GetResponse: the workload, its object as the cluster has it
// now, and whether it is there (Synced) or gone (Deleted).
func (h *workloadsV2) get(c echo.Context) error {
	m, err := h.manifested(c, true)
	if err != nil {
		return err
	}
	phase, sync := "Running", workloadV2Sync{Status: "Synced"}
	switch {
	case m.Object == nil:
		phase, sync = "Deleted", workloadV2Sync{Status: "Deleted", Message: "the workload's object is no longer in the cluster"}
	case m.Record.Phase == "Suspended":
		phase = "Stopped"
	}
	return c.JSON(http.StatusOK, workloadV2Answer{Workload: workloadV2View(m, phase, clusterID(c)), SyncInfo: sync})
}

// delete deletes the workload's object (202, Run:ai's WorkloadV2 with desiredPhase Deleted).
func (h *workloadsV2) delete(c echo.Context) error {
	target(c, "delete", "workload", c.Param("id"))
	if err := workloads.MayControlAny(identity(c)); err != nil {
		return err
	}
	m, err := h.manifested(c, false)
	if err != nil {
		return err
	}
	if err := h.service.DeleteManifest(c.Request().Context(), caller(c), m); err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, workloadV2View(m, "Deleted", clusterID(c)))
}

// workloadV2 is Run:ai's WorkloadV2. workloadManifest and rawManifest are both the object as
// Arbiter created it (with its labels and the project's namespace): Arbiter keeps no copy of
// the text sent (docs/api.md says so).
type workloadV2 struct {
	Metadata         workloadV2MetadataAnswer `json:"metadata"`
	DesiredPhase     string                   `json:"desiredPhase"`
	WorkloadManifest map[string]any           `json:"workloadManifest"`
	RawManifest      map[string]any           `json:"rawManifest"`
}

// workloadV2MetadataAnswer is Run:ai's WorkloadV2Metadata.
type workloadV2MetadataAnswer struct {
	Name           string     `json:"name"`
	ProjectID      string     `json:"projectId"`
	Priority       string     `json:"priority,omitempty"`
	Category       string     `json:"category,omitempty"`
	Preemptibility string     `json:"preemptibility,omitempty"`
	ID             string     `json:"id"`
	GVK            gvk        `json:"gvk"`
	ProjectName    string     `json:"projectName"`
	ClusterID      string     `json:"clusterId"`
	TenantID       int        `json:"tenantId"`
	DepartmentID   string     `json:"departmentId"`
	DepartmentName string     `json:"departmentName"`
	CreatedAt      time.Time  `json:"createdAt"`
	CreatedBy      string     `json:"createdBy"`
	UpdatedAt      time.Time  `json:"updatedAt"`
	UpdatedBy      string     `json:"updatedBy"`
	DeletedAt      *time.Time `json:"deletedAt,omitempty"`
}

type gvk struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type workloadV2Sync struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// workloadV2Answer is Run:ai's WorkloadV2GetResponse.
type workloadV2Answer struct {
	Workload workloadV2     `json:"workload"`
	SyncInfo workloadV2Sync `json:"syncInfo"`
}

func workloadV2View(m workloads.Manifested, desiredPhase, cluster string) workloadV2 {
	r := m.Record
	manifest := map[string]any{}
	if m.Object != nil {
		manifest = m.Object.Object
	}
	md := workloadV2MetadataAnswer{Name: r.Name, Priority: r.PriorityName, Category: r.CategoryName, Preemptibility: r.Preemptibility,
		ID: r.UID, GVK: gvk{Group: m.Kind.Group, Version: m.Kind.Version, Kind: m.Kind.Kind}, ProjectName: r.ProjectName,
		ClusterID: cluster, TenantID: runAITenantID, DepartmentName: r.DepartmentName,
		CreatedAt: r.QueuedAt, CreatedBy: r.Submitter, UpdatedAt: r.QueuedAt, UpdatedBy: r.Submitter}
	if r.ProjectID != nil {
		md.ProjectID = r.ProjectID.String()
	}
	if m.Project != nil {
		md.DepartmentID, md.DepartmentName = m.Project.DepartmentID.String(), m.Project.DepartmentName
	}
	if r.FinishedAt != nil {
		md.UpdatedAt = *r.FinishedAt
	}
	return workloadV2{Metadata: md, DesiredPhase: desiredPhase, WorkloadManifest: manifest, RawManifest: manifest}
}
