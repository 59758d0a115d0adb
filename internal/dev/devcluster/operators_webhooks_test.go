package devcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

func TestParseOperatorsAddsWhatTheyRequire(t *testing.T) {
	for list, want := range map[string][]string{
		"":                        nil,
		"kuberay, lws":            {OperatorLWS, OperatorKubeRay},
		"trainer":                 {OperatorJobSet, OperatorTrainer},
		"jobset,trainer,jobset":   {OperatorJobSet, OperatorTrainer},
		"all":                     AllOperators,
		"training-operator,all":   AllOperators,
		"lws,kuberay,jobset,lws,": {OperatorJobSet, OperatorLWS, OperatorKubeRay},
		// Kueue, the benchmarks' peer, runs only when named, after the workload operators.
		"kueue,jobset": {OperatorJobSet, OperatorKueue},
		"all,kueue":    append(slices.Clone(AllOperators), OperatorKueue),
	} {
		got, err := ParseOperators(list)
		if err != nil {
			t.Errorf("%q: %v", list, err)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: got %v, want %v", list, got, want)
		}
	}
	if _, err := ParseOperators("jobset,mpi-operator"); err == nil || !strings.Contains(err.Error(), `"mpi-operator"`) {
		t.Errorf("an unknown operator: error %v, want one naming it", err)
	}
}

// The webhooks keep their upstream object selectors: with JobSet's registered and nobody
// serving them, a pod without the JobSet label is still admitted and one with it is refused;
// once the cluster runs without JobSet, its webhook configurations are gone.
func TestOperatorWebhooksSelectTheirPodsAndGoWithTheirOperator(t *testing.T) {
	ctx := context.Background()
	client := testCluster.Client()
	ns := testNamespace(t, client)
	caPEM, err := writeWebhookCert(filepath.Join(testCluster.Dir(), "pki"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	closed, err := freePorts([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	if err := registerWebhooks(ctx, client, map[string]int{OperatorJobSet: closed[0]}, caPEM); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { registerWebhooks(ctx, client, nil, nil) })
	pod := func(labels map[string]string) error {
		_, err := client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "webhook-", Labels: labels},
			Spec:       corev1.PodSpec{SchedulerName: "arbiter-test", Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		}, metav1.CreateOptions{})
		return err
	}
	jobSetLabel := map[string]string{"jobset.sigs.k8s.io/jobset-name": "train"}
	// The API server picks up webhook configurations from a watch: wait until it has.
	poll.UntilNil(t, "a JobSet's pod is refused while nobody serves the JobSet webhook", 10*time.Second, func() error {
		if err := pod(jobSetLabel); err == nil || !strings.Contains(err.Error(), "mpod.kb.io") {
			return fmt.Errorf("error %v, want one from mpod.kb.io", err)
		}
		return nil
	})
	if err := pod(nil); err != nil {
		t.Errorf("a pod without the JobSet label was refused: %v", err)
	}

	if err := registerWebhooks(ctx, client, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, mutating := range []bool{true, false} {
		name := webhookConfigName(OperatorJobSet, mutating)
		var err error
		if mutating {
			_, err = client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{})
		} else {
			_, err = client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{})
		}
		if !apierrors.IsNotFound(err) {
			t.Errorf("webhook configuration %s remains after the cluster runs without JobSet", name)
		}
	}
	poll.UntilNil(t, "a JobSet's pod is admitted once the JobSet webhooks are gone", 10*time.Second, func() error {
		return pod(jobSetLabel)
	})
}
