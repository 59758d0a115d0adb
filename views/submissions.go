package views

// SubmittedWorkload is a workload as the submission routes answer it (POST, GET, DELETE
// /api/v1/workloads/{workspaces|trainings|distributed|inferences}...): the Workload API's
// fields, plus Run:ai's names for the same things so that Run:ai scripts find them.
type SubmittedWorkload struct {
	Workload
	WorkloadID    string `json:"workloadId"`    // the top owner's UID, as id
	RequestedName string `json:"requestedName"` // the name asked for (without a generated suffix)
	CreatedBy     string `json:"createdBy"`     // the submitter
	DesiredPhase  string `json:"desiredPhase"`  // Running, Stopped or Deleted
	ActualPhase   string `json:"actualPhase"`   // the record's phase in Run:ai's words (Suspended is Stopped)
	ClusterID     string `json:"clusterId"`     // the installation's one cluster
	// KindReason says why the workload was made as its kind, when a submission could have
	// made another: a distributed training is a PyTorchJob or an indexed Job. Arbiter's own.
	KindReason string `json:"kindReason,omitempty"`
}

// SubmissionAction is the answer to a DELETE, suspend or resume of a submitted workload: Run:ai's
// HttpResponse (the status and a sentence) with the workload as it becomes beside it.
type SubmissionAction struct {
	SubmittedWorkload
	Code    int    `json:"code"`
	Message string `json:"message"`
}
