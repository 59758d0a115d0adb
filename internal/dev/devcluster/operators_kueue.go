// Kueue on the local control plane: the queueing system most teams run next to kube-scheduler,
// run as the benchmarks' peer. It admits (unsuspends) Jobs and kube-scheduler binds their pods.
// Its deployment assumes a pod behind Services (conversion and admission webhooks reached
// through a Service, certificates mounted at fixed paths); here it runs as a process: its CRDs
// carry their storage version alone, its webhooks are registered by URL on 127.0.0.1
// (operators_webhooks.go; its Job webhook suspends a Job created in a LocalQueue), and its
// metrics server is off.

package devcluster

import (
	"fmt"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kueueMetricsCertDir is where Kueue reads its metrics server's certificate when its internal
// certificate management is off; the path is fixed in its main package and the files must exist
// even with the metrics server off. Any valid pair does: the cluster writes one, signed by its
// CA, when the directory has none.
const kueueMetricsCertDir = "/etc/kueue/metrics/certs"

// KueueQueueNameLabel is the label that puts a Job in a LocalQueue of its namespace.
const KueueQueueNameLabel = "kueue.x-k8s.io/queue-name"

// prepareKueue writes Kueue's metrics certificate when Kueue is among names.
func (c *Cluster) prepareKueue(names []string) error {
	if !slices.Contains(names, OperatorKueue) {
		return nil
	}
	if exists(filepath.Join(kueueMetricsCertDir, "tls.crt")) && exists(filepath.Join(kueueMetricsCertDir, "tls.key")) {
		return nil
	}
	if _, err := writeWebhookCert(filepath.Join(c.dir, "pki"), kueueMetricsCertDir); err != nil {
		return fmt.Errorf("devcluster: Kueue's metrics certificate in %s: %w", kueueMetricsCertDir, err)
	}
	return nil
}

// writeKueueConfig writes Kueue's configuration file (config.kueue.x-k8s.io/v1beta2, the
// version its main package reads) and returns its path: leader election, internal certificates,
// metrics and the on-demand visibility server off; its health probe on probe; its webhook server
// (which its readiness waits for) on 127.0.0.1:webhook with a
// certificate of the cluster's CA; Jobs only among the integrations, as the others' CRDs may not
// be installed. Its client's QPS and its controllers' concurrency are those of its shipped
// configuration (config/components/manager/controller_manager_config.yaml): a file without
// them gets one worker per controller.
func (c *Cluster) writeKueueConfig(probe string, webhook int) (string, error) {
	certDir := filepath.Join(c.dir, "pki", "kueue-webhook")
	if _, err := writeWebhookCert(filepath.Join(c.dir, "pki"), certDir); err != nil {
		return "", fmt.Errorf("devcluster: Kueue's webhook certificate: %w", err)
	}
	cfg := fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
metrics:
  bindAddress: "0"
health:
  healthProbeBindAddress: %s
clientConnection:
  qps: 300
  burst: 500
controller:
  groupKindConcurrency:
    Job.batch: 5
    Pod: 5
    Workload.kueue.x-k8s.io: 10
    LocalQueue.kueue.x-k8s.io: 5
    Cohort.kueue.x-k8s.io: 1
    ClusterQueue.kueue.x-k8s.io: 5
    ResourceFlavor.kueue.x-k8s.io: 1
featureGates:
  VisibilityOnDemand: false
integrations:
  frameworks:
  - batch/job
`, webhook, certDir, probe)
	path := filepath.Join(c.dir, OperatorKueue+"-config.yaml")
	if err := writeFileAtomic(path, []byte(cfg), 0o644); err != nil {
		return "", fmt.Errorf("devcluster: %w", err)
	}
	return path, nil
}

// keepStorageVersion leaves crd with its storage version alone and no conversion webhook.
func keepStorageVersion(crd *unstructured.Unstructured) error {
	versions, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if err != nil {
		return err
	}
	var keep []any
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if m["storage"] == true {
			m["served"] = true
			keep = append(keep, m)
		}
	}
	if len(keep) != 1 {
		return fmt.Errorf("CRD %s has %d storage versions, want 1", crd.GetName(), len(keep))
	}
	if err := unstructured.SetNestedSlice(crd.Object, keep, "spec", "versions"); err != nil {
		return err
	}
	unstructured.RemoveNestedField(crd.Object, "spec", "conversion")
	return nil
}
