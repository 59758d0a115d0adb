// Starting the operators of a development cluster: their CRDs installed into the control plane,
// each controller a process against it with its own free ports and leader election off, and the
// webhooks they depend on registered once their servers answer.

package devcluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// kubeflowNamespace is where training-operator and Trainer keep the Secret of their webhook
// certificate. Their certificate rotators cannot be turned off: they fill that Secret, then wait
// (before starting any controller) until its files appear in kubeflowCertDir, where a pod would
// mount the Secret. The validating webhooks those certificates serve stay unregistered.
const kubeflowNamespace = "kubeflow-system"

// kubeflowCertDir is the fixed directory training-operator and Trainer read their webhook
// server's certificate from, shared by every cluster on the machine. As no webhook
// configuration points at those servers, any valid pair serves: the cluster writes one, signed
// by its CA, when the directory has none.
const kubeflowCertDir = "/tmp/k8s-webhook-server/serving-certs"

// operatorClientQPS bounds each controller's requests to the API server: these are small
// controllers sharing two cores with the control plane and the scheduler.
const (
	operatorClientQPS   = "50"
	operatorClientBurst = "100"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// startOperators installs the CRDs of ops, starts their controllers and waits until each answers
// /readyz, then registers the webhooks of those that have them.
func (c *Cluster) startOperators(ctx context.Context, ops []*OperatorBinaries, progress io.Writer) error {
	dyn, err := dynamic.NewForConfig(c.restConfig)
	if err != nil {
		return err
	}
	names := operatorNames(ops)
	fmt.Fprintf(progress, "devcluster: installing the CRDs of %s\n", strings.Join(names, ", "))
	var crds []string
	for _, b := range ops {
		op, _ := lookupOperator(b.Name)
		installed, err := installCRDs(ctx, dyn, b.CRDDir(), op.storageVersionOnly)
		if err != nil {
			return fmt.Errorf("devcluster: installing the CRDs of %s: %w", b.Name, err)
		}
		crds = append(crds, installed...)
	}
	if err := c.watch(ctx, "the operators' CRDs to be established", func(ctx context.Context) error {
		return waitCRDsEstablished(ctx, dyn, crds)
	}); err != nil {
		return err
	}
	if err := c.prepareKubeflow(ctx, names); err != nil {
		return err
	}
	if err := c.prepareKueue(names); err != nil {
		return err
	}
	certDir := filepath.Join(c.dir, "pki", "operator-webhooks")
	var caPEM []byte
	webhookPorts := map[string]int{}
	for _, b := range ops {
		if hasWebhooks(b.Name) && caPEM == nil {
			if caPEM, err = writeWebhookCert(filepath.Join(c.dir, "pki"), certDir); err != nil {
				return fmt.Errorf("devcluster: the operators' webhook certificate: %w", err)
			}
		}
	}
	fmt.Fprintf(progress, "devcluster: starting %s\n", strings.Join(names, ", "))
	ready := map[string]string{}
	for _, b := range ops {
		ports, err := freePorts(make([]int, 2))
		if err != nil {
			return err
		}
		health, webhook := ports[0], ports[1]
		args, env, err := c.operatorCommand(b.Name, health, webhook, certDir)
		if err != nil {
			return err
		}
		if err := c.spawn(b.Name, b.Path(), env, args...); err != nil {
			return err
		}
		c.mu.Lock()
		c.st.OperatorPorts = append(c.st.OperatorPorts, operatorPorts{Name: b.Name, Health: health, Webhook: webhook})
		c.mu.Unlock()
		ready[b.Name] = fmt.Sprintf("http://127.0.0.1:%d/readyz", health)
		if hasWebhooks(b.Name) {
			webhookPorts[b.Name] = webhook
		}
	}
	if err := writeState(c.dir, c.st); err != nil {
		return err
	}
	for _, b := range ops {
		if err := c.watch(ctx, b.Name+" /readyz", func(ctx context.Context) error { return waitHTTPOK(ctx, ready[b.Name]) }); err != nil {
			return err
		}
	}
	if err := registerWebhooks(ctx, c.client, webhookPorts, caPEM); err != nil {
		return err
	}
	fmt.Fprintf(progress, "devcluster: operators ready: %s\n", strings.Join(names, ", "))
	return nil
}

// operatorCommand returns the arguments and environment of an operator's controller: the
// cluster's kubeconfig, leader election off, metrics off, its health probe on 127.0.0.1:health,
// and, for the operators whose webhooks the cluster registers, their server on
// 127.0.0.1:webhook with the certificate in certDir and their own certificate management off.
func (c *Cluster) operatorCommand(name string, health, webhook int, certDir string) (args, env []string, err error) {
	probe := "127.0.0.1:" + strconv.Itoa(health)
	env = []string{"KUBECONFIG=" + c.kubeconfig}
	switch name {
	case OperatorJobSet, OperatorLWS:
		group := map[string]string{OperatorJobSet: "config.jobset.x-k8s.io", OperatorLWS: "config.lws.x-k8s.io"}[name]
		cfg := fmt.Sprintf(`apiVersion: %s/v1alpha1
kind: Configuration
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
  qps: %s
  burst: %s
`, group, webhook, certDir, probe, operatorClientQPS, operatorClientBurst)
		path := filepath.Join(c.dir, name+"-config.yaml")
		if err := writeFileAtomic(path, []byte(cfg), 0o644); err != nil {
			return nil, nil, fmt.Errorf("devcluster: %w", err)
		}
		args = []string{"--config=" + path}
	case OperatorTrainingOperator:
		// Its webhook server listens on all interfaces (the port is all it takes); the
		// validating webhook it serves is not registered.
		args = []string{"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=" + probe,
			"--webhook-server-port=" + strconv.Itoa(webhook),
			"--kube-api-qps=" + operatorClientQPS, "--kube-api-burst=" + operatorClientBurst}
		env = append(env, "MY_POD_NAMESPACE="+kubeflowNamespace, "TMPDIR=/tmp")
	case OperatorTrainer:
		args = []string{"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=" + probe,
			"--webhook-server-port=" + strconv.Itoa(webhook)}
		env = append(env, "TMPDIR=/tmp") // its webhook server reads kubeflowCertDir as os.TempDir()/...
	case OperatorKubeRay:
		args = []string{"--enable-leader-election=false", "--metrics-addr=0", "--health-probe-bind-address=" + probe,
			"--qps=" + operatorClientQPS, "--burst=" + operatorClientBurst, "--log-stdout-encoder=console"}
	case OperatorKueue:
		path, err := c.writeKueueConfig(probe, webhook)
		if err != nil {
			return nil, nil, err
		}
		args = []string{"--config=" + path}
	default:
		return nil, nil, fmt.Errorf("devcluster: no operator %q", name)
	}
	return args, env, nil
}

// prepareKubeflow creates the namespace and the empty Secrets in which training-operator's and
// Trainer's certificate rotators keep their certificates (they fail without them), and the
// files of kubeflowCertDir.
func (c *Cluster) prepareKubeflow(ctx context.Context, names []string) error {
	secrets := map[string]string{OperatorTrainingOperator: "training-operator-webhook-cert", OperatorTrainer: "kubeflow-trainer-webhook-cert"}
	var want []string
	for _, n := range names {
		if s, ok := secrets[n]; ok {
			want = append(want, s)
		}
	}
	if len(want) == 0 {
		return nil
	}
	if !exists(filepath.Join(kubeflowCertDir, "tls.crt")) || !exists(filepath.Join(kubeflowCertDir, "tls.key")) {
		if _, err := writeWebhookCert(filepath.Join(c.dir, "pki"), kubeflowCertDir); err != nil {
			return fmt.Errorf("devcluster: the webhook certificate of training-operator and Trainer: %w", err)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kubeflowNamespace}}
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("devcluster: creating namespace %s: %w", kubeflowNamespace, err)
	}
	for _, name := range want {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: kubeflowNamespace}}
		if _, err := c.client.CoreV1().Secrets(kubeflowNamespace).Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("devcluster: creating secret %s/%s: %w", kubeflowNamespace, name, err)
		}
	}
	return nil
}

// installCRDs applies every CRD manifest in dir (server-side apply: the largest are far over the
// annotation limit of a client-side apply) and returns their names. With storageVersionOnly, each
// CRD keeps only its storage version, served, and no conversion.
func installCRDs(ctx context.Context, dyn dynamic.Interface, dir string, storageVersionOnly bool) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no CRD in %s", dir)
	}
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(b, &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		if storageVersionOnly {
			if err := keepStorageVersion(u); err != nil {
				return nil, fmt.Errorf("%s: %w", filepath.Base(f), err)
			}
		}
		if _, err := dyn.Resource(crdResource).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "arbiter-devcluster", Force: true}); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		names = append(names, u.GetName())
	}
	return names, nil
}

// waitCRDsEstablished waits until every CRD of names has the condition Established.
func waitCRDsEstablished(ctx context.Context, dyn dynamic.Interface, names []string) error {
	for _, n := range names {
		for {
			u, err := dyn.Resource(crdResource).Get(ctx, n, metav1.GetOptions{})
			if err == nil && crdEstablished(u) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("CRD %s: %w (last error: %v)", n, ctx.Err(), err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

func crdEstablished(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// waitHTTPOK polls url until it answers 200.
func waitHTTPOK(ctx context.Context, url string) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	var last string
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := hc.Do(req)
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, tail(b, 5))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last answer: %s)", url, ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
