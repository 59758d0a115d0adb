package conformance

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
)

// onClusterCheck is an entry of checkedOnCluster.
type onClusterCheck = struct {
	route string
	check func(t *testing.T, c *client, o *workloadOrg)
}

// The examples of Run:ai's Manifest and ManifestEncoded schemas, as the document gives them
// (the extract keeps only request bodies' examples, and this operation has none).
const (
	documentManifest        = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"my-app"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"my-app"}},"template":{"metadata":{"labels":{"app":"my-app"}},"spec":{"containers":[{"name":"app","image":"nginx:latest"}]}}}}`
	documentManifestEncoded = "YXBpVmVyc2lvbjogdjEKa2luZDogUG9kCm1ldGFkYXRhOgogIG5hbWU6IG15LXBvZApzcGVjOgogIGNvbnRhaW5lcnM6CiAgLSBuYW1lOiBuZ2lueAogICAgaW1hZ2U6IG5naW54OmxhdGVzdAo="
)

// Run:ai's Workloads V2 on the local control plane, after the native kinds: the document's own
// example manifests (a Deployment as JSON, a Pod as base64 YAML) submitted, read back and
// deleted.
func init() {
	checkedOnCluster = append(checkedOnCluster,
		onClusterCheck{"POST /api/v2/workloads", func(t *testing.T, c *client, o *workloadOrg) {
			var manifest map[string]any
			if err := json.Unmarshal([]byte(documentManifest), &manifest); err != nil {
				t.Fatal(err)
			}
			var w struct {
				Metadata struct{ ID, Name string }
			}
			c.do(t, exchange{method: "POST", route: "/api/v2/workloads", want: 202, out: &w, body: map[string]any{
				"metadata": map[string]any{"name": "conformance-v2", "useGivenNameAsPrefix": true, "projectId": o.projectID,
					"clusterId": c.clusterID(t, &o.org), "preemptibility": "preemptible"},
				"manifest": manifest}})
			if w.Metadata.ID == "" {
				t.Fatalf("the submitted manifest's workload has no metadata.id")
			}
			o.submitted["v2-deployment"] = w.Metadata.ID
			encoded := documentManifestEncoded
			if _, err := base64.StdEncoding.DecodeString(encoded); err != nil {
				t.Fatalf("the document's ManifestEncoded example is not base64: %v", err)
			}
			c.do(t, exchange{method: "POST", route: "/api/v2/workloads", want: 202, out: &w, body: map[string]any{
				"metadata": map[string]any{"name": "conformance-pod", "projectId": o.projectID}, "manifestBase64Encoded": encoded}})
			o.submitted["v2-pod"] = w.Metadata.ID
			// A manifest the Pod Security Standard baseline refuses, in the document's 400 shape.
			c.do(t, exchange{method: "POST", route: "/api/v2/workloads", want: 400, body: map[string]any{
				"metadata": map[string]any{"name": "privileged", "projectId": o.projectID},
				"manifest": map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": map[string]any{"hostPID": true,
					"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}}})
		}},
		onClusterCheck{"GET /api/v2/workloads/{WorkloadV2Id}", func(t *testing.T, c *client, o *workloadOrg) {
			for _, kind := range []string{"v2-deployment", "v2-pod"} {
				c.do(t, exchange{method: "GET", route: "/api/v2/workloads/{WorkloadV2Id}", params: map[string]string{"WorkloadV2Id": o.submitted[kind]}, want: 200})
			}
			c.do(t, exchange{method: "GET", route: "/api/v2/workloads/{WorkloadV2Id}", params: map[string]string{"WorkloadV2Id": uuid.NewString()}, want: 404})
		}},
		onClusterCheck{"DELETE /api/v2/workloads/{WorkloadV2Id}", func(t *testing.T, c *client, o *workloadOrg) {
			for _, kind := range []string{"v2-deployment", "v2-pod"} {
				c.do(t, exchange{method: "DELETE", route: "/api/v2/workloads/{WorkloadV2Id}", params: map[string]string{"WorkloadV2Id": o.submitted[kind]}, want: 202})
			}
		}},
	)
}
