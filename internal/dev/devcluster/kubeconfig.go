// The kubeconfig of a development cluster, and the clients built from it.

package devcluster

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// writeConfig writes the kubeconfig, kwok's stages and kube-scheduler's configuration, and
// sets up the REST config.
func (c *Cluster) writeConfig(token string) error {
	host := fmt.Sprintf("https://127.0.0.1:%d", c.st.APIServerPort)
	ca := filepath.Join(c.dir, "pki", "ca.crt")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: arbiter-devcluster
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: arbiter-devcluster
  context:
    cluster: arbiter-devcluster
    user: admin
    namespace: default
current-context: arbiter-devcluster
`, host, ca, token)
	if err := writeFileAtomic(c.kubeconfig, []byte(kc), 0o600); err != nil {
		return fmt.Errorf("devcluster: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(c.dir, "kwok-stages.yaml"), kwokStages, 0o644); err != nil {
		return fmt.Errorf("devcluster: %w", err)
	}
	sched := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
`, c.kubeconfig)
	if err := writeFileAtomic(filepath.Join(c.dir, "kube-scheduler.yaml"), []byte(sched), 0o644); err != nil {
		return fmt.Errorf("devcluster: %w", err)
	}
	return c.loadClient()
}

func (c *Cluster) loadClient() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		return fmt.Errorf("devcluster: %w", err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	c.restConfig = cfg
	c.client, err = kubernetes.NewForConfig(cfg)
	return err
}

// KubeconfigPath returns the kubeconfig of the cluster in dir, or an error if there is none.
func KubeconfigPath(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	kc := filepath.Join(dir, "kubeconfig")
	if !exists(kc) {
		return "", fmt.Errorf("devcluster: no cluster in %s (start one with: arbiter devcluster up --dir %s)", dir, dir)
	}
	return kc, nil
}
