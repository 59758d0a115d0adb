// Admission webhooks of the operators that depend on theirs: JobSet (its defaulting webhook
// fills fields the controller dereferences), LeaderWorkerSet (its pod webhook sets the group
// labels) and Kueue (its Job webhook suspends a Job of a LocalQueue as it is created, and its
// own objects are defaulted and validated by its webhooks). Their servers listen on 127.0.0.1
// with a certificate from the cluster's CA, and the configurations reach them by URL.
// training-operator's and Trainer's webhooks only validate and are not registered; KubeRay's
// are off by default.

package devcluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// labelWebhookOperator marks the webhook configurations the cluster registers for an operator, so
// that a cluster started again without that operator removes them (else the API server would
// refuse the operator's objects for want of a webhook nobody serves).
const labelWebhookOperator = "devcluster.arbiter.dev/operator"

// webhookRule is one upstream webhook: its name and path on the operator's server, what it
// intercepts, and the label whose presence selects the objects it applies to (empty: no object
// selector).
type webhookRule struct {
	name, path     string
	mutating       bool
	group          string
	version        string
	resources      []string
	operations     []admissionv1.OperationType
	objectSelector string
}

var (
	create       = []admissionv1.OperationType{admissionv1.Create}
	createUpdate = []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}
)

// operatorWebhooks are the webhooks of sigs.k8s.io/jobset v0.10.1
// (config/components/webhook/manifests.yaml with the object selectors of its patches),
// sigs.k8s.io/lws v0.7.0 (config/webhook/manifests.yaml with its patches) and sigs.k8s.io/kueue
// v0.19.2 (config/components/webhook/manifests.yaml: those of its own kinds and of the one
// integration it runs here, batch/job). Compare them with the new release's files when moving a
// pin. Kueue's Job webhooks select Jobs with a queue label, where its deployment selects by
// namespace: on a cluster shared with Arbiter, Arbiter's Jobs do not pass through Kueue.
var operatorWebhooks = map[string][]webhookRule{
	OperatorJobSet: {
		{name: "mjobset.kb.io", path: "/mutate-jobset-x-k8s-io-v1alpha2-jobset", mutating: true,
			group: "jobset.x-k8s.io", version: "v1alpha2", resources: []string{"jobsets"}, operations: create},
		{name: "mpod.kb.io", path: "/mutate--v1-pod", mutating: true,
			group: "", version: "v1", resources: []string{"pods"}, operations: create, objectSelector: "jobset.sigs.k8s.io/jobset-name"},
		{name: "vjobset.kb.io", path: "/validate-jobset-x-k8s-io-v1alpha2-jobset",
			group: "jobset.x-k8s.io", version: "v1alpha2", resources: []string{"jobsets"}, operations: createUpdate},
		{name: "vpod.kb.io", path: "/validate--v1-pod",
			group: "", version: "v1", resources: []string{"pods"}, operations: create, objectSelector: "jobset.sigs.k8s.io/jobset-name"},
	},
	OperatorLWS: {
		{name: "mleaderworkerset.kb.io", path: "/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset", mutating: true,
			group: "leaderworkerset.x-k8s.io", version: "v1", resources: []string{"leaderworkersets"}, operations: createUpdate},
		{name: "mpod.kb.io", path: "/mutate--v1-pod", mutating: true,
			group: "", version: "v1", resources: []string{"pods"}, operations: createUpdate, objectSelector: "leaderworkerset.sigs.k8s.io/name"},
		{name: "vleaderworkerset.kb.io", path: "/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset",
			group: "leaderworkerset.x-k8s.io", version: "v1", resources: []string{"leaderworkersets"}, operations: createUpdate},
		{name: "vpod.kb.io", path: "/validate--v1-pod",
			group: "", version: "v1", resources: []string{"pods"}, operations: createUpdate, objectSelector: "leaderworkerset.sigs.k8s.io/name"},
	},
	OperatorKueue: {
		{name: "mjob.kb.io", path: "/mutate-batch-v1-job", mutating: true,
			group: "batch", version: "v1", resources: []string{"jobs"}, operations: create, objectSelector: KueueQueueNameLabel},
		{name: "vjob.kb.io", path: "/validate-batch-v1-job",
			group: "batch", version: "v1", resources: []string{"jobs"}, operations: createUpdate, objectSelector: KueueQueueNameLabel},
		{name: "mclusterqueue.kb.io", path: "/mutate-kueue-x-k8s-io-v1beta2-clusterqueue", mutating: true,
			group: "kueue.x-k8s.io", version: "v1beta2", resources: []string{"clusterqueues"}, operations: create},
		{name: "mresourceflavor.kb.io", path: "/mutate-kueue-x-k8s-io-v1beta2-resourceflavor", mutating: true,
			group: "kueue.x-k8s.io", version: "v1beta2", resources: []string{"resourceflavors"}, operations: create},
		{name: "mworkload.kb.io", path: "/mutate-kueue-x-k8s-io-v1beta2-workload", mutating: true,
			group: "kueue.x-k8s.io", version: "v1beta2", resources: []string{"workloads"}, operations: create},
		{name: "vclusterqueue.kb.io", path: "/validate-kueue-x-k8s-io-v1beta2-clusterqueue",
			group: "kueue.x-k8s.io", version: "v1beta2", resources: []string{"clusterqueues"}, operations: createUpdate},
		{name: "vcohort.kb.io", path: "/validate-kueue-x-k8s-io-v1beta2-cohort",
			group: "kueue.x-k8s.io", version: "v1beta2", resources: []string{"cohorts"}, operations: createUpdate},
		{name: "vresourceflavor.kb.io", path: "/validate-kueue-x-k8s-io-v1beta2-resourceflavor",
			group: "kueue.x-k8s.io", version: "v1beta2", resources: []string{"resourceflavors"}, operations: createUpdate},
		{name: "vworkload.kb.io", path: "/validate-kueue-x-k8s-io-v1beta2-workload",
			group: "kueue.x-k8s.io", version: "v1beta2", resources: []string{"workloads", "workloads/status"}, operations: createUpdate},
	},
}

// webhookConfigName is the name of the cluster's webhook configuration for an operator.
func webhookConfigName(op string, mutating bool) string {
	if mutating {
		return "devcluster-" + op + "-mutating"
	}
	return "devcluster-" + op + "-validating"
}

// registerWebhooks makes the webhook configurations of the running operators (ports: the port
// of each one's webhook server) exactly those, removing the ones of operators not running.
func registerWebhooks(ctx context.Context, client kubernetes.Interface, ports map[string]int, caPEM []byte) error {
	adm := client.AdmissionregistrationV1()
	for op, port := range ports {
		mut := &admissionv1.MutatingWebhookConfiguration{ObjectMeta: webhookMeta(op, true)}
		val := &admissionv1.ValidatingWebhookConfiguration{ObjectMeta: webhookMeta(op, false)}
		for _, r := range operatorWebhooks[op] {
			url := fmt.Sprintf("https://127.0.0.1:%d%s", port, r.path)
			fail, none := admissionv1.Fail, admissionv1.SideEffectClassNone
			cc := admissionv1.WebhookClientConfig{URL: &url, CABundle: caPEM}
			rules := []admissionv1.RuleWithOperations{{
				Operations: r.operations,
				Rule:       admissionv1.Rule{APIGroups: []string{r.group}, APIVersions: []string{r.version}, Resources: r.resources},
			}}
			var sel *metav1.LabelSelector
			if r.objectSelector != "" {
				sel = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: r.objectSelector, Operator: metav1.LabelSelectorOpExists}}}
			}
			if r.mutating {
				mut.Webhooks = append(mut.Webhooks, admissionv1.MutatingWebhook{Name: r.name, ClientConfig: cc, Rules: rules,
					FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, ObjectSelector: sel})
			} else {
				val.Webhooks = append(val.Webhooks, admissionv1.ValidatingWebhook{Name: r.name, ClientConfig: cc, Rules: rules,
					FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, ObjectSelector: sel})
			}
		}
		if err := applyWebhookConfiguration(ctx, client.AdmissionregistrationV1().MutatingWebhookConfigurations(), mut); err != nil {
			return err
		}
		if err := applyWebhookConfiguration(ctx, client.AdmissionregistrationV1().ValidatingWebhookConfigurations(), val); err != nil {
			return err
		}
	}
	// Remove the configurations of operators that no longer run here.
	sel := metav1.ListOptions{LabelSelector: labelWebhookOperator}
	muts, err := adm.MutatingWebhookConfigurations().List(ctx, sel)
	if err != nil {
		return fmt.Errorf("devcluster: listing webhook configurations: %w", err)
	}
	for _, m := range muts.Items {
		if _, ok := ports[m.Labels[labelWebhookOperator]]; !ok {
			if err := adm.MutatingWebhookConfigurations().Delete(ctx, m.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("devcluster: deleting webhook configuration %s: %w", m.Name, err)
			}
		}
	}
	vals, err := adm.ValidatingWebhookConfigurations().List(ctx, sel)
	if err != nil {
		return fmt.Errorf("devcluster: listing webhook configurations: %w", err)
	}
	for _, v := range vals.Items {
		if _, ok := ports[v.Labels[labelWebhookOperator]]; !ok {
			if err := adm.ValidatingWebhookConfigurations().Delete(ctx, v.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("devcluster: deleting webhook configuration %s: %w", v.Name, err)
			}
		}
	}
	return nil
}

func webhookMeta(op string, mutating bool) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: webhookConfigName(op, mutating), Labels: map[string]string{labelWebhookOperator: op}}
}

// webhookConfigurations is the client of one kind of webhook configuration (mutating or
// validating), T its object.
type webhookConfigurations[T metav1.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// applyWebhookConfiguration creates want, or replaces the configuration of its name.
func applyWebhookConfiguration[T metav1.Object](ctx context.Context, api webhookConfigurations[T], want T) error {
	cur, err := api.Get(ctx, want.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = api.Create(ctx, want, metav1.CreateOptions{})
	case err == nil:
		want.SetResourceVersion(cur.GetResourceVersion())
		_, err = api.Update(ctx, want, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("devcluster: registering webhook configuration %s: %w", want.GetName(), err)
	}
	return nil
}

// writeWebhookCert writes dir/tls.crt and dir/tls.key (the names controller-runtime's webhook
// server reads): a serving certificate for 127.0.0.1 signed by the cluster's CA in pki, whose
// certificate it returns for the configurations' caBundle.
func writeWebhookCert(pki, dir string) (caPEM []byte, err error) {
	caPEM, err = os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(pki, "ca.key"))
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(caPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("devcluster: the cluster's CA files are not PEM")
	}
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	caKey, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	now := time.Now().Add(-time.Hour)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "devcluster-operator-webhooks"},
		NotBefore:    now,
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := writePEM(filepath.Join(dir, "tls.key"), "EC PRIVATE KEY", keyDER); err != nil {
		return nil, err
	}
	if err := writePEM(filepath.Join(dir, "tls.crt"), "CERTIFICATE", der); err != nil {
		return nil, err
	}
	return caPEM, nil
}

// hasWebhooks reports whether op serves webhooks the cluster registers.
func hasWebhooks(op string) bool {
	_, ok := operatorWebhooks[op]
	return ok
}
