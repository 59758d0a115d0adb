package devcluster

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// Labels and annotations of the fake nodes.
const (
	// LabelNodePool carries a node's pool name (the POOL of a node spec, e.g. "a100"). Arbiter's
	// node pools select nodes by a label key and value; this is the key to use for devcluster
	// nodes.
	LabelNodePool = "arbiter.dev/node-pool"
	// LabelGPUProduct is the GPU model label NVIDIA's GPU feature discovery sets.
	LabelGPUProduct = "nvidia.com/gpu.product"
	// LabelGPUCount is the number of GPUs label NVIDIA's GPU feature discovery sets.
	LabelGPUCount = "nvidia.com/gpu.count"
	// LabelManagedBy marks nodes that devcluster created (value "arbiter-devcluster").
	LabelManagedBy = "app.kubernetes.io/managed-by"
	managedByValue = "arbiter-devcluster"
	// AnnotationKwokNode makes kwok manage a node (value "fake").
	AnnotationKwokNode = "kwok.x-k8s.io/node"
	// ResourceGPU is the extended resource of NVIDIA's device plugin.
	ResourceGPU corev1.ResourceName = "nvidia.com/gpu"
	// LabelTopologyBlock and LabelTopologyRack place a node in the network (S29): a rack of
	// NodesPerRack nodes, a block of RacksPerBlock racks, each pool's own (its nodes' names
	// say which). With kubernetes.io/hostname they are TopologyLevels.
	LabelTopologyBlock = "topology.arbiter.dev/block"
	LabelTopologyRack  = "topology.arbiter.dev/rack"
	// NodesPerRack and RacksPerBlock size the racks and blocks: two 8-GPU nodes share a rack
	// (16 GPUs), four racks a block, as in the small clusters whose racks hold a few DGX nodes.
	NodesPerRack  = 2
	RacksPerBlock = 4
)

// TopologyLevels are the node labels of the fake nodes' topology, widest first.
var TopologyLevels = []string{LabelTopologyBlock, LabelTopologyRack, corev1.LabelHostname}

// Rack and Block name the rack and the block of the i-th node (from 0) of the pool, e.g.
// "a100-rack-1" and "a100-block-0".
func (p Pool) Rack(i int) string { return fmt.Sprintf("%s-rack-%d", p.Name, i/NodesPerRack) }
func (p Pool) Block(i int) string {
	return fmt.Sprintf("%s-block-%d", p.Name, i/(NodesPerRack*RacksPerBlock))
}

// DefaultNodes is the node spec of "arbiter devcluster up" and of serve's demo mode.
const DefaultNodes = "a100=4x8,h100=2x8"

// Pool is one pool of identical fake GPU nodes.
type Pool struct {
	// Name is the pool's name, the value of the arbiter.dev/node-pool label and the prefix of
	// its nodes' names.
	Name string
	// Nodes is the number of nodes.
	Nodes int
	// GPUs is the number of nvidia.com/gpu per node (0 for CPU-only nodes).
	GPUs int
}

// NodeName returns the name of the i-th node (from 0) of the pool, e.g. "kwok-a100-0".
func (p Pool) NodeName(i int) string { return fmt.Sprintf("kwok-%s-%d", p.Name, i) }

var poolRE = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)=([0-9]+)x([0-9]+)$`)

// ParseNodeSpec parses a node spec: comma-separated POOL=NODESxGPUS items, e.g.
// "a100=4x8,h100=2x8" (4 nodes of 8 GPUs in pool a100, 2 nodes of 8 GPUs in pool h100). POOL
// is a lower-case DNS label; GPUS may be 0 for CPU-only nodes. An empty spec means no nodes.
func ParseNodeSpec(spec string) ([]Pool, error) {
	var pools []Pool
	seen := map[string]bool{}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		m := poolRE.FindStringSubmatch(item)
		if m == nil {
			return nil, fmt.Errorf("devcluster: bad node pool %q: want POOL=NODESxGPUS, e.g. a100=4x8", item)
		}
		nodes, err1 := strconv.Atoi(m[3])
		gpus, err2 := strconv.Atoi(m[4])
		if err1 != nil || err2 != nil || nodes < 1 || nodes > 10000 || gpus > 64 || len(m[1]) > 40 {
			return nil, fmt.Errorf("devcluster: bad node pool %q: 1-10000 nodes of 0-64 GPUs, a name of at most 40 characters", item)
		}
		if seen[m[1]] {
			return nil, fmt.Errorf("devcluster: node pool %q given twice", m[1])
		}
		seen[m[1]] = true
		pools = append(pools, Pool{Name: m[1], Nodes: nodes, GPUs: gpus})
	}
	return pools, nil
}

// gpuProduct names the GPU model the way GPU feature discovery does, for well-known pool names.
func gpuProduct(pool string) string {
	switch pool {
	case "a100":
		return "NVIDIA-A100-SXM4-80GB"
	case "h100":
		return "NVIDIA-H100-80GB-HBM3"
	case "h200":
		return "NVIDIA-H200"
	case "l4":
		return "NVIDIA-L4"
	case "t4":
		return "Tesla-T4"
	case "v100":
		return "Tesla-V100-SXM2-32GB"
	}
	return "NVIDIA-" + strings.ToUpper(pool)
}

// Node returns the i-th fake node of the pool: annotated for kwok, labelled with its pool, GPU
// model, rack and block, with 8 CPUs and 64Gi of memory per GPU (at least 16 and 64Gi), 110 pods and the
// pool's nvidia.com/gpu as capacity and allocatable.
func (p Pool) Node(i int) *corev1.Node {
	name := p.NodeName(i)
	cpu := max(8*p.GPUs, 16)
	memGi := max(64*p.GPUs, 64)
	res := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(cpu), resource.DecimalSI),
		corev1.ResourceMemory:           resource.MustParse(fmt.Sprintf("%dGi", memGi)),
		corev1.ResourcePods:             *resource.NewQuantity(110, resource.DecimalSI),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
	labels := map[string]string{
		"kubernetes.io/hostname": name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		"type":                   "kwok",
		LabelNodePool:            p.Name,
		LabelManagedBy:           managedByValue,
		LabelTopologyRack:        p.Rack(i),
		LabelTopologyBlock:       p.Block(i),
	}
	if p.GPUs > 0 {
		res[ResourceGPU] = *resource.NewQuantity(int64(p.GPUs), resource.DecimalSI)
		labels[LabelGPUProduct] = gpuProduct(p.Name)
		labels[LabelGPUCount] = strconv.Itoa(p.GPUs)
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{AnnotationKwokNode: "fake", "node.alpha.kubernetes.io/ttl": "0"},
		},
		Status: corev1.NodeStatus{
			Capacity:    res,
			Allocatable: res.DeepCopy(),
			NodeInfo: corev1.NodeSystemInfo{
				Architecture:    "amd64",
				OperatingSystem: "linux",
				KubeletVersion:  "fake",
			},
			Phase: corev1.NodeRunning,
		},
	}
}

// AddNodes creates the nodes of pools that do not exist yet, with their capacity in their status
// (the API server keeps a node's status on create); kwok makes them Ready. Existing nodes are
// left as they are.
func AddNodes(ctx context.Context, client kubernetes.Interface, pools []Pool) error {
	var nodes []*corev1.Node
	for _, p := range pools {
		for i := 0; i < p.Nodes; i++ {
			nodes = append(nodes, p.Node(i))
		}
	}
	// A few requests at a time: hundreds of nodes (benchmarks) take seconds, not minutes.
	work := make(chan *corev1.Node)
	errs := make(chan error, len(nodes))
	var wg sync.WaitGroup
	for range min(16, len(nodes)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				_, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
				if err != nil && !apierrors.IsAlreadyExists(err) {
					errs <- fmt.Errorf("devcluster: creating node %s: %w", n.Name, err)
				}
			}
		}()
	}
	for _, n := range nodes {
		work <- n
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs // the first error, or nil
}

// SyncNodes makes the devcluster-created nodes exactly those of pools: it adds the missing ones
// and deletes the ones (created by devcluster) that pools no longer name.
func SyncNodes(ctx context.Context, client kubernetes.Interface, pools []Pool) error {
	want := map[string]bool{}
	for _, p := range pools {
		for i := 0; i < p.Nodes; i++ {
			want[p.NodeName(i)] = true
		}
	}
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + managedByValue})
	if err != nil {
		return fmt.Errorf("devcluster: listing nodes: %w", err)
	}
	for _, n := range list.Items {
		if !want[n.Name] {
			if err := client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("devcluster: deleting node %s: %w", n.Name, err)
			}
		}
	}
	if err := labelTopology(ctx, client, pools, list.Items); err != nil {
		return err
	}
	return AddNodes(ctx, client, pools)
}

// WaitNodesReady waits until every node of pools is Ready.
func WaitNodesReady(ctx context.Context, client kubernetes.Interface, pools []Pool) error {
	var notReady string
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + managedByValue})
		if err != nil {
			return false, nil
		}
		ready := map[string]bool{}
		for _, n := range list.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready[n.Name] = true
				}
			}
		}
		for _, p := range pools {
			for i := 0; i < p.Nodes; i++ {
				if !ready[p.NodeName(i)] {
					notReady = p.NodeName(i)
					return false, nil
				}
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("devcluster: node %s not Ready: %w", notReady, err)
	}
	return nil
}

// labelTopology gives the existing nodes of pools the rack and block labels Node gives new
// ones, where they lack them (a cluster kept from before the labels were given).
func labelTopology(ctx context.Context, client kubernetes.Interface, pools []Pool, existing []corev1.Node) error {
	byName := map[string]*corev1.Node{}
	for i := range existing {
		byName[existing[i].Name] = &existing[i]
	}
	for _, p := range pools {
		for i := 0; i < p.Nodes; i++ {
			n := byName[p.NodeName(i)]
			if n == nil || n.Labels[LabelTopologyRack] == p.Rack(i) && n.Labels[LabelTopologyBlock] == p.Block(i) {
				continue
			}
			patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q,%q:%q}}}`, LabelTopologyRack, p.Rack(i), LabelTopologyBlock, p.Block(i))
			if _, err := client.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				return fmt.Errorf("devcluster: labelling node %s: %w", n.Name, err)
			}
		}
	}
	return nil
}
