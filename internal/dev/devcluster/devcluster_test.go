package devcluster

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// One cluster for the test binary; tests isolate themselves by namespace.
var testCluster *Cluster

const testNodes = "a100=2x8,cpu=1x0"

func TestMain(m *testing.M) {
	if dir := os.Getenv("DEVCLUSTER_TEST_HELPER_DIR"); dir != "" {
		helperOwner(dir)
		return
	}
	os.Exit(runMain(m))
}

// helperOwner starts a cluster (not detached), prints its PIDs and waits to be killed.
func helperOwner(dir string) {
	c, err := Start(context.Background(), Options{Dir: dir})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	for _, pid := range c.PIDs() {
		fmt.Println("PID", pid)
	}
	fmt.Println("READY")
	select {}
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "devcluster-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	start := time.Now()
	c, err := Start(ctx, Options{Dir: dir, Nodes: testNodes, Progress: os.Stderr, Timeout: 3 * time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the devcluster:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "devcluster: test cluster ready in %s\n", time.Since(start).Round(10*time.Millisecond))
	testCluster = c
	code := m.Run()
	if err := stopOperatorCluster(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the devcluster with operators:", err)
		code = 1
	}
	pids := c.PIDs()
	if err := c.Stop(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the devcluster:", err)
		code = 1
	}
	for name, pid := range pids {
		if pidAlive(pid) {
			fmt.Fprintf(os.Stderr, "devcluster: %s (pid %d) still running after Stop\n", name, pid)
			syscall.Kill(pid, syscall.SIGKILL)
			code = 1
		}
	}
	return code
}

func testNamespace(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-"}}
	created, err := client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.CoreV1().Namespaces().Delete(context.Background(), created.Name, metav1.DeleteOptions{})
	})
	return created.Name
}

func TestParseNodeSpec(t *testing.T) {
	pools, err := ParseNodeSpec("a100=4x8, h100=2x8,cpu=3x0")
	if err != nil {
		t.Fatal(err)
	}
	want := []Pool{{"a100", 4, 8}, {"h100", 2, 8}, {"cpu", 3, 0}}
	if fmt.Sprint(pools) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", pools, want)
	}
	if pools, err := ParseNodeSpec(""); err != nil || len(pools) != 0 {
		t.Fatalf("empty spec: %v %v", pools, err)
	}
	for _, bad := range []string{"a100", "a100=4", "a100=x8", "A100=1x8", "a100=0x8", "a100=1x8,a100=2x8", "a100=1x65", "-a=1x1"} {
		if _, err := ParseNodeSpec(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestNodesReadyWithGPUs(t *testing.T) {
	client := testCluster.Client()
	nodes, err := client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: LabelNodePool + "=a100"})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 2 {
		t.Fatalf("%d a100 nodes, want 2", len(nodes.Items))
	}
	for _, n := range nodes.Items {
		gpu := n.Status.Allocatable[ResourceGPU]
		if gpu.Value() != 8 {
			t.Errorf("%s: allocatable nvidia.com/gpu %s, want 8", n.Name, gpu.String())
		}
		if cpu := n.Status.Capacity[corev1.ResourceCPU]; cpu.Value() != 64 {
			t.Errorf("%s: cpu %s, want 64", n.Name, cpu.String())
		}
		if n.Labels[LabelGPUProduct] != "NVIDIA-A100-SXM4-80GB" {
			t.Errorf("%s: labels %v", n.Name, n.Labels)
		}
		if len(n.Spec.Taints) != 0 {
			t.Errorf("%s has taints %v; schedulers would not place pods there", n.Name, n.Spec.Taints)
		}
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
		}
		if !ready {
			t.Errorf("%s not Ready: %v", n.Name, n.Status.Conditions)
		}
	}
	cpuNode, err := client.CoreV1().Nodes().Get(context.Background(), "kwok-cpu-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cpuNode.Status.Capacity[ResourceGPU]; ok {
		t.Errorf("cpu node has GPUs: %v", cpuNode.Status.Capacity)
	}
}

func podsOf(t *testing.T, client kubernetes.Interface, ns, selector string) []corev1.Pod {
	t.Helper()
	list, err := client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func bind(t *testing.T, client kubernetes.Interface, pod *corev1.Pod, node string) {
	t.Helper()
	err := client.CoreV1().Pods(pod.Namespace).Bind(context.Background(), &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("binding %s to %s: %v", pod.Name, node, err)
	}
}

func waitPhase(t *testing.T, client kubernetes.Interface, ns, name string, phase corev1.PodPhase, timeout time.Duration) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	poll.UntilNil(t, fmt.Sprintf("pod %s/%s is %s", ns, name, phase), timeout, func() error {
		p, err := client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		pod = p
		if p.Status.Phase != phase {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	})
	return pod
}

// A Job whose pods opt in to schedulerName arbiter: nothing schedules them (kube-scheduler
// does not run), the test binds them, kwok runs them for their annotated duration and
// completes them, and the Job completes.
func TestJobPodsRunForTheirDurationThenComplete(t *testing.T) {
	t.Parallel()
	client := testCluster.Client()
	ns := testNamespace(t, client)
	ctx := context.Background()
	const runSeconds = 4
	job := objects.Job("train", ns).Pods(2).GPUs(4).PodAnnotation(AnnotationRunSeconds, fmt.Sprint(runSeconds)).Obj()
	if _, err := client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	poll.UntilNil(t, "the Job's two pods are created", 30*time.Second, func() error {
		if pods = podsOf(t, client, ns, "job-name=train"); len(pods) != 2 {
			return fmt.Errorf("%d pods", len(pods))
		}
		return nil
	})
	// Nobody else schedules them: a second passes (a scheduler would bind them within it) and
	// they are still unbound. The sleep is the point; there is nothing to wait for.
	time.Sleep(time.Second)
	for _, p := range podsOf(t, client, ns, "job-name=train") {
		if p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending {
			t.Fatalf("pod %s was scheduled by someone else: node %q phase %s", p.Name, p.Spec.NodeName, p.Status.Phase)
		}
	}
	for i := range pods {
		bind(t, client, &pods[i], fmt.Sprintf("kwok-a100-%d", i))
	}
	for _, p := range pods {
		running := waitPhase(t, client, ns, p.Name, corev1.PodRunning, 15*time.Second)
		if running.Status.StartTime == nil {
			t.Fatalf("pod %s Running without a start time", p.Name)
		}
		// Still running well before its duration has elapsed: half a second passes, on
		// purpose, and it has not finished early.
		if d := time.Since(running.Status.StartTime.Time); d < time.Duration(runSeconds-2)*time.Second {
			time.Sleep(500 * time.Millisecond)
			again, _ := client.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
			if again.Status.Phase != corev1.PodRunning {
				t.Fatalf("pod %s is %s %s after it started, want Running for %ds", p.Name, again.Status.Phase, d, runSeconds)
			}
		}
	}
	for _, p := range pods {
		done := waitPhase(t, client, ns, p.Name, corev1.PodSucceeded, 30*time.Second)
		cs := done.Status.ContainerStatuses
		if len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 0 {
			t.Fatalf("pod %s: container statuses %+v", p.Name, cs)
		}
		ran := cs[0].State.Terminated.FinishedAt.Sub(done.Status.StartTime.Time)
		if ran < (runSeconds-1)*time.Second || ran > (runSeconds+5)*time.Second {
			t.Errorf("pod %s ran %s, want about %ds", p.Name, ran, runSeconds)
		}
	}
	poll.Until(t, "the Job is complete", 30*time.Second, func() bool {
		j, err := client.BatchV1().Jobs(ns).Get(ctx, "train", metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	})
}

// A pod annotated to fail fails after its duration; a pod without a duration keeps running;
// a pod for the default scheduler stays unscheduled (kube-scheduler is not running).
func TestPodFailsOrRunsForever(t *testing.T) {
	t.Parallel()
	client := testCluster.Client()
	ns := testNamespace(t, client)
	ctx := context.Background()
	mk := func(name string, ann map[string]string, scheduler string) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
			Spec: corev1.PodSpec{
				SchedulerName: scheduler,
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "c", Image: "example.com/c"}},
			},
		}
		created, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return created
	}
	failing := mk("failing", map[string]string{AnnotationRunSeconds: "1", AnnotationExit: "failed"}, "arbiter")
	forever := mk("forever", nil, "arbiter")
	unscheduled := mk("unscheduled", nil, "")
	bind(t, client, failing, "kwok-cpu-0")
	bind(t, client, forever, "kwok-cpu-0")
	failed := waitPhase(t, client, ns, "failing", corev1.PodFailed, 20*time.Second)
	if cs := failed.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 1 {
		t.Fatalf("failed pod: container statuses %+v", cs)
	}
	waitPhase(t, client, ns, "forever", corev1.PodRunning, 10*time.Second)
	// A pod without a duration never finishes: two seconds pass, on purpose (longer than the
	// failing pod's one), and it still runs.
	time.Sleep(2 * time.Second)
	if p, err := client.CoreV1().Pods(ns).Get(ctx, "forever", metav1.GetOptions{}); err != nil || p.Status.Phase != corev1.PodRunning {
		t.Fatalf("pod without a duration: %v %v", p.Status.Phase, err)
	}
	if p, err := client.CoreV1().Pods(ns).Get(ctx, unscheduled.Name, metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("a default-scheduler pod was scheduled (node %q): kube-scheduler must not run by default (%v)", p.Spec.NodeName, err)
	}
	// Deleting a running pod removes it at once.
	if err := client.CoreV1().Pods(ns).Delete(ctx, "forever", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the deleted pod is gone", 15*time.Second, func() bool {
		_, err := client.CoreV1().Pods(ns).Get(ctx, "forever", metav1.GetOptions{})
		return err != nil
	})
}

// Starting again in the directory of a healthy running cluster returns it as it is.
func TestStartAgainReusesRunningCluster(t *testing.T) {
	c, err := Start(context.Background(), Options{Dir: testCluster.Dir(), Nodes: testNodes})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(c.PIDs()) != fmt.Sprint(testCluster.PIDs()) {
		t.Fatalf("PIDs %v, want the running cluster's %v", c.PIDs(), testCluster.PIDs())
	}
	if err := c.Stop(context.Background()); err != nil { // does not stop a reused cluster
		t.Fatal(err)
	}
	for name, pid := range testCluster.PIDs() {
		if !pidAlive(pid) {
			t.Fatalf("%s stopped by Stop of a reused cluster", name)
		}
	}
}

// A second cluster in its own directory: a component that dies is reported with its log; a
// start in a directory with leftovers of a broken cluster replaces them; Stop leaves nothing.
func TestBrokenClusterIsReportedAndReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second cluster")
	}
	ctx := context.Background()
	dir := t.TempDir()
	c, err := Start(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	first := c.PIDs()
	if err := syscall.Kill(first[Kwok], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.Failed():
		if !strings.Contains(err.Error(), "kwok exited") || !strings.Contains(err.Error(), filepath.Join(dir, "logs", "kwok.log")) {
			t.Errorf("failure report: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the death of kwok was not reported")
	}
	// Start again in the same directory, as a new owner would after a crash: the leftovers are
	// stopped and a new cluster runs.
	c2, err := Start(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for name, pid := range first {
		if pidAlive(pid) {
			t.Errorf("%s (pid %d) of the broken cluster still running", name, pid)
		}
	}
	second := c2.PIDs()
	if len(second) != 4 {
		t.Errorf("components %v, want etcd, kube-apiserver, kube-controller-manager, kwok", second)
	}
	if _, err := c2.Client().CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Stop(ctx) // the first owner stopping late must not touch the second cluster's processes
	for name, pid := range second {
		if !pidAlive(pid) {
			t.Fatalf("%s of the new cluster stopped by the old owner", name)
		}
	}
	if err := c2.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for name, pid := range second {
		if pidAlive(pid) {
			t.Errorf("%s (pid %d) still running after Stop", name, pid)
		}
	}
	if exists(filepath.Join(dir, "state.json")) {
		t.Error("state.json left after Stop")
	}
}

// The components of a cluster that is not detached die with the process that started it, even
// when that process is SIGKILLed and cannot stop them.
func TestComponentsDieWithTheirOwner(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second cluster")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DEVCLUSTER_TEST_HELPER_DIR="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if pid, ok := strings.CutPrefix(line, "PID "); ok {
			n, _ := strconv.Atoi(pid)
			pids = append(pids, n)
		}
		if line == "READY" || strings.HasPrefix(line, "ERROR") {
			if line != "READY" {
				t.Fatal(line)
			}
			break
		}
	}
	if len(pids) != 4 {
		t.Fatalf("helper reported PIDs %v", pids)
	}
	cmd.Process.Kill()
	cmd.Wait()
	alive := func() (alive []int) {
		for _, pid := range pids {
			if pidAlive(pid) {
				alive = append(alive, pid)
			}
		}
		return alive
	}
	// On a timeout the survivors are killed here, so that the failure leaves no process behind.
	if !poll.Within(10*time.Second, func() bool { return len(alive()) == 0 }) {
		survivors := alive()
		for _, pid := range survivors {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("pids %v outlived their owner", survivors)
	}
}

// The control plane collects garbage less often than Go's default (controlPlaneGOGC); the
// test cluster has no kube-scheduler, the baseline that keeps the default.
func TestControlPlaneRunsWithRaisedGOGC(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set in the environment, and so applies to every component")
	}
	pids := testCluster.PIDs()
	for _, name := range []string{Etcd, KubeAPIServer, KubeControllerManager, Kwok} {
		pid, ok := pids[name]
		if !ok {
			t.Fatalf("%s not running: PIDs %v", name, pids)
		}
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			t.Fatal(err)
		}
		var gogc []string
		for _, kv := range strings.Split(string(environ), "\x00") {
			if v, ok := strings.CutPrefix(kv, "GOGC="); ok {
				gogc = append(gogc, v)
			}
		}
		if len(gogc) != 1 || gogc[0] != controlPlaneGOGC {
			t.Errorf("%s runs with GOGC %q, want [%s]", name, gogc, controlPlaneGOGC)
		}
	}
}

// TestNodesCarryTheirRackAndBlock: each fake node is labelled with its rack (NodesPerRack
// nodes each) and block, and SyncNodes gives a node kept from before the labels its own.
func TestNodesCarryTheirRackAndBlock(t *testing.T) {
	ctx := context.Background()
	client := testCluster.Client()
	want := map[string][2]string{"kwok-a100-0": {"a100-block-0", "a100-rack-0"}, "kwok-a100-1": {"a100-block-0", "a100-rack-0"},
		"kwok-cpu-0": {"cpu-block-0", "cpu-rack-0"}}
	check := func(when string) {
		t.Helper()
		for name, w := range want {
			n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := [2]string{n.Labels[LabelTopologyBlock], n.Labels[LabelTopologyRack]}; got != w || n.Labels[corev1.LabelHostname] != name {
				t.Errorf("%s: node %s in block, rack %v (hostname %q); want %v", when, name, got, n.Labels[corev1.LabelHostname], w)
			}
		}
	}
	check("created")
	unlabel := fmt.Sprintf(`{"metadata":{"labels":{%q:null,%q:null}}}`, LabelTopologyRack, LabelTopologyBlock)
	if _, err := client.CoreV1().Nodes().Patch(ctx, "kwok-cpu-0", types.MergePatchType, []byte(unlabel), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	pools, err := ParseNodeSpec(testNodes)
	if err != nil {
		t.Fatal(err)
	}
	if err := SyncNodes(ctx, client, pools); err != nil {
		t.Fatal(err)
	}
	check("synced")
}
