package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/store"
)

// submitsWithChartRBAC proves the chart's ClusterRole enough for the submission API: Arbiter,
// running with the chart's ServiceAccount token, creates an inference (a Deployment and a
// Service) and a distributed training (an indexed Job and its Service), stops the training
// (patch) and deletes the inference.
func submitsWithChartRBAC(ctx context.Context, t *testing.T, admin kubernetes.Interface, url, dbURL, ns string) {
	t.Helper()
	pg, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	st := store.New(pg)
	id := uuid.New()
	token, hash := auth.NewAPIKey(id)
	if _, err := st.CreateAPIKey(ctx, store.NewAPIKey{ID: id, Name: "rbac-submit", Role: "admin", ScopeType: "system",
		ExpiresAt: time.Now().Add(time.Hour), SecretHash: hash}, store.Actor{Subject: "deploy-test", SubjectType: "system"}); err != nil {
		t.Fatal(err)
	}
	p, err := st.ProjectNamed(ctx, "vision")
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(res.Body).Decode(&m)
		return res.StatusCode, m
	}
	status, inf := call("POST", "/api/v1/workloads/inferences", fmt.Sprintf(
		`{"name":"serve","projectId":%q,"spec":{"image":"example.invalid/serve:1","servingPort":{"container":8000}}}`, p.ID))
	if status != 202 {
		t.Fatalf("submitting an inference with the chart's RBAC = %d %v", status, inf)
	}
	status, dist := call("POST", "/api/v1/workloads/distributed", fmt.Sprintf(
		`{"name":"dist","projectId":%q,"spec":{"image":"example.invalid/train:1","numWorkers":2}}`, p.ID))
	if status != 202 {
		t.Fatalf("submitting a distributed training with the chart's RBAC = %d %v", status, dist)
	}
	for _, svc := range []string{"serve", "dist"} {
		if _, err := admin.CoreV1().Services(ns).Get(ctx, svc, metav1.GetOptions{}); err != nil {
			t.Errorf("Service %s: %v", svc, err)
		}
	}
	if status, m := call("POST", "/api/v1/workloads/distributed/"+dist["workloadId"].(string)+"/suspend", ""); status != 202 {
		t.Errorf("stopping the training with the chart's RBAC = %d %v", status, m)
	}
	if status, m := call("DELETE", "/api/v1/workloads/inferences/"+inf["workloadId"].(string), ""); status != 202 {
		t.Errorf("deleting the inference with the chart's RBAC = %d %v", status, m)
	}
	// Workloads V2: a StatefulSet by its manifest, read back (a list by name) and deleted.
	status, sts := call("POST", "/api/v2/workloads", fmt.Sprintf(`{"metadata":{"name":"kv","projectId":%q},"manifest":{"apiVersion":"apps/v1",
		"kind":"StatefulSet","spec":{"serviceName":"kv","selector":{"matchLabels":{"app":"kv"}},"template":{"metadata":{"labels":{"app":"kv"}},
		"spec":{"containers":[{"name":"kv","image":"example.invalid/kv:1"}]}}}}}`, p.ID))
	if status != 202 {
		t.Fatalf("submitting a StatefulSet manifest with the chart's RBAC = %d %v", status, sts)
	}
	stsID := sts["metadata"].(map[string]any)["id"].(string)
	if status, m := call("GET", "/api/v2/workloads/"+stsID, ""); status != 200 || m["syncInfo"].(map[string]any)["status"] != "Synced" {
		t.Errorf("reading the StatefulSet back with the chart's RBAC = %d %v", status, m)
	}
	if status, m := call("DELETE", "/api/v2/workloads/"+stsID, ""); status != 202 {
		t.Errorf("deleting the StatefulSet with the chart's RBAC = %d %v", status, m)
	}
	poll.Until(t, "the training is suspended, the inference and the StatefulSet gone", time.Minute, func() bool {
		j, jerr := admin.BatchV1().Jobs(ns).Get(ctx, "dist", metav1.GetOptions{})
		_, derr := admin.AppsV1().Deployments(ns).Get(ctx, "serve", metav1.GetOptions{})
		_, serr := admin.AppsV1().StatefulSets(ns).Get(ctx, "kv", metav1.GetOptions{})
		return jerr == nil && j.Spec.Suspend != nil && *j.Spec.Suspend && derr != nil && serr != nil
	})
}
