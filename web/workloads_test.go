package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"k8s.io/utils/ptr"
)

func TestWorkloadList(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, &fakeLabeler{})
	srv := f.srv

	// Default: unfinished workloads by queue time, oldest first; one page.
	first := getList[views.Workload](t, srv, "/api/v1/workloads", "workloads")
	if got := workloadNames(first.Items); got != "train-a,train-b,beta-job,gamma-job,orphan" {
		t.Fatalf("workloads = %s", got)
	}
	if first.Next != nil {
		t.Errorf("next = %d, want none", *first.Next)
	}
	// On the last page next is absent (Run:ai's next is an integer or nothing, never null).
	if _, ok := decode[map[string]json.RawMessage](t, get(t, srv, "/api/v1/workloads").body)["next"]; ok {
		t.Errorf("the last page answers next: %s", get(t, srv, "/api/v1/workloads").body)
	}
	// Every field of the OpenAPI schema Workload is in the answer, null or not.
	raw := decodeList[json.RawMessage](t, get(t, srv, "/api/v1/workloads").body, "workloads").Items[1]
	fields := slices.Sorted(maps.Keys(decode[map[string]json.RawMessage](t, raw)))
	want := []string{"id", "name", "namespace", "kind", "type", "category", "projectId", "projectName", "departmentName",
		"priorityName", "priorityValue", "preemptible", "preemptibility", "priorityFrom", "preemptibilityFrom", "k8sPhase", "reason", "message", "queuePosition", "gang", "requestedGpus",
		"allocatedGpus", "nodePool", "nodes", "createdAt", "startedAt", "finishedAt", "pendingSeconds", "preemptions", "submitter", "estimatedStartAt", "estimateBasis",
		// Run:ai's
		"phase", "phaseMessage", "priority", "priorityClassName", "tenantId", "clusterId", "departmentId", "source", "submittedBy", "updatedAt",
		"phaseUpdatedAt", "k8sPhaseUpdatedAt", "completedAt", "deletedAt", "runningPods", "conditions", "currentNodePools", "distributedFramework",
		"totalPendingTimeSeconds", "totalRunningTimeSeconds"}
	slices.Sort(want)
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("fields of a workload (-want +got):\n%s", diff)
	}
	b := named(t, first.Items, "train-b", func(w views.Workload) string { return w.Name })
	if diff := cmp.Diff(f.view(f.trainB), b, asWritten, recordClock); diff != "" {
		t.Errorf("train-b (-want +got):\n%s", diff)
	}
	a := named(t, first.Items, "train-a", func(w views.Workload) string { return w.Name })
	if diff := cmp.Diff(f.view(f.trainA), a, asWritten, pendingSeconds, recordClock); diff != "" {
		t.Errorf("train-a (-want +got):\n%s", diff)
	}
	if waited := time.Duration(a.PendingSeconds) * time.Second; waited < time.Since(f.t0)-5*time.Second {
		t.Errorf("train-a has waited %v, want about %v", waited, time.Since(f.t0))
	}

	// deleted=true lists only finished workloads, from history (Run:ai's "only deleted").
	if got := workloads(t, srv, "deleted=true"); got != "serve-c" {
		t.Errorf("deleted=true: %s", got)
	}
	completed := list[views.Workload](t, srv, "/api/v1/workloads?deleted=true&filterBy=phase==Completed", "workloads")
	if diff := cmp.Diff([]views.Workload{f.view(f.serveC)}, completed, asWritten, recordClock); diff != "" {
		t.Errorf("completed workloads (-want +got):\n%s", diff)
	}

	// Filters on every field of the OpenAPI schema Workload.
	for query, want := range map[string]string{
		"filterBy=projectName==alpha":                       "train-a,train-b",
		"filterBy=departmentName==research":                 "train-a,train-b,beta-job",
		"filterBy=namespace==scratch":                       "orphan",
		"filterBy=name=^train":                              "train-a,train-b",
		"filterBy=phase==Pending,projectName!=alpha":        "beta-job,gamma-job,orphan",
		"filterBy=priority==125":                            "train-b",
		"filterBy=priorityName==high":                       "train-b",
		"filterBy=priorityClassName==high":                  "train-b",
		"filterBy=preemptible==false":                       "train-b",
		"filterBy=reason==NoProject":                        "orphan",
		"filterBy=type==Job,category==Train":                "train-a,train-b,beta-job,gamma-job,orphan",
		"filterBy=type==InferenceService&deleted=true":      "serve-c",
		"filterBy=requestedGpus>=2":                         "train-a,train-b,beta-job",
		"search=JOB":                                        "beta-job,gamma-job",
		"filterBy=projectName==alpha&deleted=true&search=s": "serve-c",
	} {
		if got := workloads(t, srv, query); got != want {
			t.Errorf("%s: %s, want %s", query, got, want)
		}
	}

	// Sorting.
	for query, want := range map[string]string{
		"sortBy=createdAt&sortOrder=desc":                               "orphan,gamma-job,beta-job,train-b,train-a",
		"sortBy=name":                                                   "beta-job,gamma-job,orphan,train-a,train-b",
		"sortBy=priority&sortOrder=desc":                                "train-b,gamma-job,orphan,train-a,beta-job",
		"sortBy=requestedGpus&sortOrder=desc":                           "train-b,train-a,beta-job,gamma-job,orphan",
		"sortBy=phase&sortOrder=desc&filterBy=projectName==alpha":       "train-b,train-a",
		"sortBy=queuePosition&filterBy=phase==Pending,queuePosition>=1": "train-a,beta-job,gamma-job",
		"sortBy=pendingSeconds&sortOrder=desc":                          "train-a,beta-job,gamma-job,orphan,train-b",
	} {
		if got := workloads(t, srv, query); got != want {
			t.Errorf("%s: %s, want %s", query, got, want)
		}
	}

	// Paging: next is the following page's offset, absent on the last.
	type page struct {
		Names string
		Next  *int
	}
	var pages []page
	for _, offset := range []int{0, 2, 4} {
		l := getList[views.Workload](t, srv, fmt.Sprintf("/api/v1/workloads?limit=2&offset=%d", offset), "workloads")
		pages = append(pages, page{workloadNames(l.Items), l.Next})
	}
	if diff := cmp.Diff([]page{{"train-a,train-b", ptr.To(2)}, {"beta-job,gamma-job", ptr.To(4)}, {"orphan", nil}}, pages); diff != "" {
		t.Errorf("pages of two (-want +got):\n%s", diff)
	}

	// Bad queries are 400s that name what is wrong.
	for query, want := range map[string]string{
		"filterBy=owner==bob":     `"owner"`,
		"filterBy=phase~Pending":  "operator",
		"sortBy=uid":              `"uid"`,
		"limit=0":                 "limit",
		"offset=-1":               "offset",
		"deleted=maybe":           "deleted",
		"filterBy=preemptible=@t": "=@",
	} {
		r := do(t, srv, "GET", "/api/v1/workloads?"+query, "", "")
		if r.status != 400 || !strings.Contains(r.refusal(t).Message, want) {
			t.Errorf("%s = %d %s, want 400 naming %s", query, r.status, r.body, want)
		}
	}
}

func TestWorkloadGetAndEvents(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, &fakeLabeler{})
	srv := f.srv
	if diff := cmp.Diff(f.view(f.trainB), getAs[views.Workload](t, srv, "/api/v1/workloads/"+f.trainB), asWritten, recordClock); diff != "" {
		t.Errorf("GET (-want +got):\n%s", diff)
	}
	// A finished workload is still found by id.
	if diff := cmp.Diff(f.view(f.serveC), getAs[views.Workload](t, srv, "/api/v1/workloads/"+f.serveC), asWritten, recordClock); diff != "" {
		t.Errorf("GET a finished workload (-want +got):\n%s", diff)
	}
	evs := list[views.WorkloadEvent](t, srv, "/api/v1/workloads/"+f.trainB+"/events", "events")
	want := []views.WorkloadEvent{
		{At: f.at(1), Kind: "Queued", Message: "Queued in project alpha.", Actor: "scheduler"},
		{At: f.at(2), Kind: "Admitted", Message: "Admitted on n1, n2.", Actor: "scheduler"},
	}
	if diff := cmp.Diff(want, evs, asWritten, cmpopts.IgnoreFields(views.WorkloadEvent{}, "ID", "RunAIEvent")); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// An eviction names its preemptor and, for a reclaim, what the project borrowed.
	borrowed := 3
	reclaim := store.WorkloadEvent{WorkloadUID: f.serveC, At: f.at(3), Kind: "Reclaimed", Reason: "S17", Message: "Reclaimed.",
		PreemptorUID: f.trainB, Borrowed: &borrowed}
	if err := f.st.RecordWorkloads(context.Background(), nil, []store.WorkloadEvent{reclaim}); err != nil {
		t.Fatal(err)
	}
	want = []views.WorkloadEvent{{At: f.at(3), Kind: "Reclaimed", Reason: "S17", Message: "Reclaimed.", Actor: "scheduler", PreemptorID: f.trainB, BorrowedGPUs: &borrowed}}
	reclaimed := list[views.WorkloadEvent](t, srv, "/api/v1/workloads/"+f.serveC+"/events", "events")
	if diff := cmp.Diff(want, reclaimed, asWritten, cmpopts.IgnoreFields(views.WorkloadEvent{}, "ID", "RunAIEvent")); diff != "" {
		t.Errorf("a reclaim's event (-want +got):\n%s", diff)
	}
	// Beside Arbiter's fields, Run:ai's: a reclaim is a Warning about the workload's top owner.
	if len(reclaimed) == 1 {
		got := reclaimed[0].RunAIEvent
		if !got.CreatedAt.Equal(f.at(3)) || got.Type != "Warning" || got.ClusterID != store.SeedID("cluster", "arbiter").String() || got.InvolvedObject.UID != f.serveC {
			t.Errorf("a reclaim's Run:ai fields are %+v: want createdAt %v, a Warning, the one cluster, about %s", got, f.at(3), f.serveC)
		}
	}
	if diff := cmp.Diff([]views.WorkloadEvent{}, list[views.WorkloadEvent](t, srv, "/api/v1/workloads/"+f.trainA+"/events", "events")); diff != "" {
		t.Errorf("no events, want [] (-want +got):\n%s", diff)
	}
	for _, path := range []string{"/api/v1/workloads/" + uuid.NewString(), "/api/v1/workloads/" + uuid.NewString() + "/events"} {
		if r := do(t, srv, "GET", path, "", ""); r.status != 404 || r.refusal(t).Code != 404 {
			t.Errorf("GET %s = %d %s, want 404", path, r.status, r.body)
		}
	}
	if r := do(t, srv, "GET", "/api/v1/workloads/not-a-uid", "", ""); r.status != 400 || !strings.Contains(string(r.body), "not-a-uid") {
		t.Errorf("bad id = %d %s", r.status, r.body)
	}
	if r := doAs(t, srv, "", "GET", "/api/v1/workloads", "", ""); r.status != 401 {
		t.Errorf("no credentials = %d", r.status)
	}
}

// TestWorkloadVisibility: lists and lookups show only the projects the caller holds a role in.
func TestWorkloadVisibility(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, &fakeLabeler{})
	srv, st := f.srv, f.st
	for _, tc := range []struct {
		who, role, scopeType, scopeID string
		want                          string
	}{
		{"system viewer", "viewer", "system", "", "train-a,train-b,beta-job,gamma-job,orphan"},
		{"alpha viewer", "viewer", "project", f.alpha, "train-a,train-b"},
		{"alpha researcher", "researcher", "project", f.alpha, "train-a,train-b"},
		{"research department admin", "department-admin", "department", f.research, "train-a,train-b,beta-job"},
		{"viewer of a project without workloads", "viewer", "project", uuid.NewString(), ""},
	} {
		key := newAPIKey(t, st, tc.role, tc.scopeType, tc.scopeID)
		r := doAs(t, srv, key, "GET", "/api/v1/workloads", "", "")
		if r.status != 200 {
			t.Fatalf("%s: %d %s", tc.who, r.status, r.body)
		}
		if got := workloadNames(decodeList[views.Workload](t, r.body, "workloads").Items); got != tc.want {
			t.Errorf("%s sees %q, want %q", tc.who, got, tc.want)
		}
	}
	alphaViewer := newAPIKey(t, st, "viewer", "project", f.alpha)
	if r := doAs(t, srv, alphaViewer, "GET", "/api/v1/workloads/"+f.trainA, "", ""); r.status != 200 {
		t.Errorf("alpha viewer GET own project's workload = %d", r.status)
	}
	for _, path := range []string{"/api/v1/workloads/" + f.betaJob, "/api/v1/workloads/" + f.orphan, "/api/v1/workloads/" + f.betaJob + "/events"} {
		if r := doAs(t, srv, alphaViewer, "GET", path, "", ""); r.status != 404 {
			t.Errorf("alpha viewer GET %s = %d, want 404 (not visible)", path, r.status)
		}
	}
}

func TestWorkloadPatch(t *testing.T) {
	t.Parallel()
	lab := &fakeLabeler{}
	f := newWorkloadAPI(t, lab)
	srv, st := f.srv, f.st
	patch := func(t *testing.T, token, id, body string) response {
		t.Helper()
		return doAs(t, srv, token, "PATCH", "/api/v1/workloads/"+id, "application/json", body)
	}
	admin := tokenOf(srv)

	t.Run("an admin's priority change is labelled, answered, on the history and audited", func(t *testing.T) {
		// An admin raises a priority: the label is patched on the top owner, the answer carries
		// the requested value, and the change is on the history and the audit log.
		r := patch(t, admin, f.trainA, `{"priority":"high"}`)
		if r.status != 200 {
			t.Fatalf("PATCH priority = %d %s", r.status, r.body)
		}
		raised := f.view(f.trainA)
		raised.PriorityName, raised.PriorityValue, raised.PriorityClassName, raised.Priority = "high", 125, "high", 125
		if diff := cmp.Diff(raised, decode[views.Workload](t, r.body), asWritten, pendingSeconds, recordClock); diff != "" {
			t.Errorf("answer (-want +got):\n%s", diff)
		}
		call := lab.last(t)
		if call.uid != f.trainA || len(call.set) != 1 || call.set["priorityClassName"] == nil || *call.set["priorityClassName"] != "high" {
			t.Errorf("labeler call = %+v", call)
		}
		evs := list[views.WorkloadEvent](t, srv, "/api/v1/workloads/"+f.trainA+"/events", "events")
		if len(evs) != 1 || evs[0].Kind != "PriorityChanged" || !strings.Contains(evs[0].Message, "priority from low to high") {
			t.Errorf("events = %+v", evs)
		}
		rows := auditRows(t, st, "workload")
		if len(rows) != 1 || rows[0].EntityID != f.trainA || rows[0].EntityName != "train-a" || rows[0].Result != "success" ||
			fmt.Sprint(rows[0].Changes["priority"]) != "map[from:low to:high]" {
			t.Errorf("audit = %+v", rows)
		}
	})

	t.Run("preemptibility is set, then removed back to the type's default", func(t *testing.T) {
		// Preemptibility: set, then removed (back to the type's default).
		r := patch(t, admin, f.trainA, `{"preemptibility":"non-preemptible"}`)
		if r.status != 200 || decode[views.Workload](t, r.body).Preemptible {
			t.Errorf("PATCH preemptibility = %d %s", r.status, r.body)
		}
		if call := lab.last(t); *call.set["kai.scheduler/preemptibility"] != "non-preemptible" {
			t.Errorf("labeler call = %+v", call)
		}
		r = patch(t, admin, f.trainA, `{"preemptibility":null,"priority":"low"}`)
		if r.status != 200 {
			t.Errorf("PATCH null = %d %s", r.status, r.body)
		}
		if call := lab.last(t); len(call.set) != 2 || call.set["kai.scheduler/preemptibility"] != nil || *call.set["priorityClassName"] != "low" {
			t.Errorf("labeler call = %+v", call)
		}
		if rows := auditRows(t, st, "workload"); len(rows) != 3 || fmt.Sprint(rows[0].Changes["preemptibility"]) != "map[from:preemptible to:<nil>]" {
			t.Errorf("audit = %+v", rows[0])
		}
		// Each change is its own kind of event: a change of preemptibility is not a change of
		// priority.
		var kinds []string
		for _, ev := range list[views.WorkloadEvent](t, srv, "/api/v1/workloads/"+f.trainA+"/events", "events") {
			said, _, _ := strings.Cut(ev.Message, " by ") // and who: the test's admin
			kinds = append(kinds, ev.Kind+": "+said)
		}
		wantKinds := []string{
			"PriorityChanged: Changed priority from low to high",
			"PreemptibilityChanged: Changed preemptibility from preemptible to non-preemptible",
			"PriorityChanged: Changed priority from low to low",
			"PreemptibilityChanged: Changed preemptibility from preemptible back to the workload type's default",
		}
		if diff := cmp.Diff(wantKinds, kinds); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})

	t.Run("bad input and changes outside the project's policy are refused with what to send", func(t *testing.T) {
		// Bad input: 400s that say what to send.
		calls := lab.count()
		for _, tc := range []struct{ id, body, want string }{
			{f.trainA, `{"priority":"urgent"}`, `"urgent" is not in the priority dictionary; use one of: very-low, low, medium-low, medium, medium-high, high, very-high`},
			{f.trainA, `{"priority":null}`, "priority must name a priority"},
			{f.trainA, `{"preemptibility":"sometimes"}`, `preemptibility "sometimes" is not valid`},
			{f.trainA, `{}`, "send priority, preemptibility or both"},
			{f.trainA, `{"owner":"bob"}`, `unknown field "owner"`},
			{f.trainA, `{"priority":7}`, `priority must be a string, not a number`},
			// The project's policy (S7).
			{f.betaJob, `{"priority":"high"}`, "project beta does not allow changing priority"},
			{f.gammaJob, `{"priority":"very-high"}`, "priority very-high (150) is outside project gamma's allowed range medium-low (65) to high (125)"},
			{f.gammaJob, `{"priority":"low"}`, "outside project gamma's allowed range"},
			{f.gammaJob, `{"preemptibility":"non-preemptible"}`, "project gamma does not allow changing preemptibility (its policy's allowPreemptibilityChange is false)"},
			{f.gammaJob, `{"priority":"high","preemptibility":null}`, "project gamma does not allow changing preemptibility"},
		} {
			r := patch(t, admin, tc.id, tc.body)
			if r.status != 400 || !strings.Contains(r.refusal(t).Message, tc.want) {
				t.Errorf("PATCH %s = %d %s, want 400 with %q", tc.body, r.status, r.body, tc.want)
			}
		}
		if lab.count() != calls {
			t.Errorf("refused changes reached the cluster")
		}
		if r := patch(t, admin, "not-a-uid", `{"priority":"high"}`); r.status != 400 {
			t.Errorf("bad id = %d", r.status)
		}
		if r := doAs(t, srv, admin, "PATCH", "/api/v1/workloads/"+f.trainA, "text/plain", `{"priority":"high"}`); r.status != 415 {
			t.Errorf("not JSON = %d", r.status)
		}
	})

	t.Run("changes within the policy are made, unknown and finished workloads refused", func(t *testing.T) {
		// Within the policy: beta's preemptibility may change, gamma's priority within its range.
		if r := patch(t, admin, f.betaJob, `{"preemptibility":"non-preemptible"}`); r.status != 200 {
			t.Errorf("beta preemptibility = %d %s", r.status, r.body)
		}
		if r := patch(t, admin, f.gammaJob, `{"priority":"medium-high"}`); r.status != 200 || decode[views.Workload](t, r.body).PriorityValue != 90 {
			t.Errorf("gamma in range = %d %s", r.status, r.body)
		}
		if r := patch(t, admin, f.orphan, `{"priority":"very-high"}`); r.status != 200 {
			t.Errorf("no project, no policy = %d %s", r.status, r.body)
		}
		if r := patch(t, admin, uuid.NewString(), `{"priority":"high"}`); r.status != 404 {
			t.Errorf("unknown workload = %d", r.status)
		}
		if r := patch(t, admin, f.serveC, `{"priority":"high"}`); r.status != 409 || !strings.Contains(string(r.body), "finished") {
			t.Errorf("finished workload = %d %s", r.status, r.body)
		}
	})

	t.Run("who may change which workload", func(t *testing.T) {
		// Roles: viewers, and researchers on a workload they did not submit, get 403; a research
		// manager changes any workload of the project, and does not see others'.
		for _, tc := range []struct {
			role, scopeType, scopeID, want string
		}{
			{"viewer", "system", "", "your role does not allow you"},
			{"viewer", "project", f.alpha, "your role does not allow you"},
			{"researcher", "project", f.alpha, "only their own workloads"},
		} {
			key := newAPIKey(t, st, tc.role, tc.scopeType, tc.scopeID)
			if r := patch(t, key, f.trainB, `{"priority":"high"}`); r.status != 403 || !strings.Contains(string(r.body), tc.want) {
				t.Errorf("%s at %s: PATCH = %d %s, want 403 with %q", tc.role, tc.scopeType, r.status, r.body, tc.want)
			}
		}
		betaManager := newAPIKey(t, st, "research-manager", "project", f.beta)
		if r := patch(t, betaManager, f.trainB, `{"priority":"high"}`); r.status != 404 {
			t.Errorf("beta's manager on an alpha workload = %d %s, want 404 (not visible)", r.status, r.body)
		}
		manager := newAPIKey(t, st, "research-manager", "project", f.alpha)
		if r := patch(t, manager, f.trainB, `{"priority":"medium"}`); r.status != 200 {
			t.Errorf("research manager = %d %s", r.status, r.body)
		}
		deptAdmin := newAPIKey(t, st, "department-admin", "department", f.ops)
		if r := patch(t, deptAdmin, f.gammaJob, `{"priority":"high"}`); r.status != 200 {
			t.Errorf("department admin = %d %s", r.status, r.body)
		}
		if r := patch(t, deptAdmin, f.orphan, `{"priority":"high"}`); r.status != 404 {
			t.Errorf("department admin on a workload without project = %d, want 404", r.status)
		}
	})

	t.Run("a workload gone from the cluster or a cluster error records no change", func(t *testing.T) {
		// The cluster no longer has the workload: 404, and nothing is recorded.
		before := len(auditRows(t, st, "workload"))
		evBefore := len(list[views.WorkloadEvent](t, srv, "/api/v1/workloads/"+f.trainB+"/events", "events"))
		lab.mu.Lock()
		lab.err = goneError{}
		lab.mu.Unlock()
		if r := patch(t, admin, f.trainB, `{"priority":"high"}`); r.status != 404 || !strings.Contains(string(r.body), "no longer in the cluster") {
			t.Errorf("gone = %d %s", r.status, r.body)
		}
		lab.mu.Lock()
		lab.err = errors.New("connection refused")
		lab.mu.Unlock()
		if r := patch(t, admin, f.trainB, `{"priority":"high"}`); r.status != 503 || strings.Contains(string(r.body), "refused") {
			t.Errorf("cluster error = %d %s", r.status, r.body)
		}
		// A workload of a kind Arbiter does not watch cannot be labelled: 409 with what to do
		// instead, not a 503 that asks to try again.
		lab.mu.Lock()
		lab.err = unwatchedError{}
		lab.mu.Unlock()
		if r := patch(t, admin, f.trainB, `{"priority":"high"}`); r.status != 409 || !strings.Contains(string(r.body), unwatchedError{}.Error()) {
			t.Errorf("unwatched kind = %d %s, want 409 saying what to do", r.status, r.body)
		}
		rows := auditRows(t, st, "workload")
		if len(rows)-before != 3 || rows[0].Result != "failure" || rows[1].Result != "failure" || rows[2].Result != "failure" {
			t.Errorf("failed changes: %d new audit rows (want 3 failures): %+v", len(rows)-before, rows[:3])
		}
		if n := len(list[views.WorkloadEvent](t, srv, "/api/v1/workloads/"+f.trainB+"/events", "events")); n != evBefore {
			t.Errorf("failed changes left %d events", n-evBefore)
		}
	})
}

// TestWorkloadPatchWithoutCluster: with no cluster connected a change is a 503 that says so.
func TestWorkloadPatchWithoutCluster(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, nil)
	r := do(t, f.srv, "PATCH", "/api/v1/workloads/"+f.trainA, "application/json", `{"priority":"high"}`)
	if r.status != 503 || !strings.Contains(r.refusal(t).Message, "no cluster is connected") {
		t.Errorf("PATCH without cluster = %d %s", r.status, r.body)
	}
	if n := len(list[views.WorkloadEvent](t, f.srv, "/api/v1/workloads/"+f.trainA+"/events", "events")); n != 0 {
		t.Errorf("%d events recorded", n)
	}
}
