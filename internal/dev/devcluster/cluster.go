// Package devcluster runs a local Kubernetes control plane for development, tests and demos:
// etcd, kube-apiserver, kube-controller-manager (and optionally kube-scheduler) built from their
// Go modules (see hack/k8s), and kwok, which simulates GPU nodes and the lifecycle of the pods
// bound to them. No Docker, no images, no downloaded binaries. See docs/devcluster.md.
//
// Arbiter is the cluster's scheduler: kube-scheduler does not run unless asked for
// (Options.KubeScheduler), so pods wait until something binds them.
package devcluster

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Pod annotations understood by the cluster's kwok stages (see kwok-stages.yaml).
const (
	// AnnotationRunSeconds makes a pod terminate this many seconds (a decimal number) after it
	// started Running. A pod without it runs until it is deleted.
	AnnotationRunSeconds = "arbiter.dev/run-seconds"
	// AnnotationExit says how a pod with AnnotationRunSeconds ends: "succeeded" (the default;
	// phase Succeeded, exit code 0) or "failed" (phase Failed, exit code 1).
	AnnotationExit = "arbiter.dev/exit"
)

//go:embed kwok-stages.yaml
var kwokStages []byte

// Options configure Start.
type Options struct {
	// Dir holds the cluster's state: keys, kubeconfig, etcd data, logs and the PIDs of its
	// processes. It is created if missing. Required.
	Dir string
	// Nodes is a node spec (see ParseNodeSpec), e.g. "a100=4x8,h100=2x8". The devcluster
	// nodes are made exactly these (missing ones created, others deleted) and Start waits until
	// they are Ready. Empty leaves the nodes as they are (none in a new cluster).
	Nodes string
	// KubeScheduler also runs kube-scheduler (the benchmark baseline; it schedules only pods
	// whose schedulerName is default-scheduler).
	KubeScheduler bool
	// Operators names the operators to run against the control plane (see ParseOperators and
	// docs/devcluster.md): their CRDs are installed and their controllers started, built first
	// if needed (see EnsureOperators). Those an operator requires are added.
	Operators []string
	// Progress receives progress lines (building, starting, ready); nil discards them.
	Progress io.Writer
	// Detach leaves the processes running when the calling process exits (the CLI's "up").
	// Without it they are killed by the kernel when the caller dies (Pdeathsig), so a test
	// binary that crashes leaves nothing behind.
	Detach bool
	// Timeout bounds the start once the binaries are built; default 2 minutes.
	Timeout time.Duration
}

// Cluster is a running development cluster.
type Cluster struct {
	dir        string
	kubeconfig string
	restConfig *rest.Config
	client     *kubernetes.Clientset
	st         *state
	owned      bool // started by this Cluster (Stop stops it) rather than found running

	mu       sync.Mutex
	procs    []*proc
	stopping bool
	failed   chan error
	spawner  *spawner
}

// Start starts a cluster in opts.Dir and returns when it is ready: the API server answers
// /readyz, the controller manager has created the default service account, and the nodes of
// opts.Nodes are Ready. It builds the binaries first if needed (see EnsureBinaries).
//
// If the directory's cluster is already running and healthy with the same components, Start
// returns it as it is (Stop then leaves it running; StopDir stops it). If some of its processes
// are left over (e.g. its owner was killed), Start stops them and starts afresh; etcd's data,
// the keys and the token are kept. If a component exits during the start, the error carries the
// tail of its log.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Dir == "" {
		return nil, errors.New("devcluster: Options.Dir is required")
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Minute
	}
	pools, err := ParseNodeSpec(opts.Nodes)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return nil, fmt.Errorf("devcluster: %w", err)
	}
	need := []string{Etcd, KubeAPIServer, KubeControllerManager, Kwok}
	if opts.KubeScheduler {
		need = append(need, KubeScheduler)
	}
	bins, err := EnsureBinaries(ctx, progress, need...)
	if err != nil {
		return nil, err
	}
	if opts.Operators, err = resolveOperators(opts.Operators); err != nil {
		return nil, err
	}
	ops, err := EnsureOperators(ctx, progress, opts.Operators...)
	if err != nil {
		return nil, err
	}
	unlock, err := lockDir(ctx, dir, progress)
	if err != nil {
		return nil, err
	}
	defer unlock()

	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	token, err := ensurePKI(filepath.Join(dir, "pki"))
	if err != nil {
		return nil, err
	}

	old, _ := readState(dir)
	if old != nil {
		if c := reuse(ctx, dir, old, bins, opts, token); c != nil {
			fmt.Fprintf(progress, "devcluster: reusing the cluster running in %s\n", dir)
			if len(pools) > 0 {
				if err := c.syncNodes(ctx, pools, progress); err != nil {
					return nil, err
				}
			}
			return c, nil
		}
		if err := stopState(dir, old, 10*time.Second); err != nil {
			return nil, err
		}
	}

	st := &state{
		Version:       bins.Version,
		BinDir:        bins.Dir,
		KubeScheduler: opts.KubeScheduler,
		Operators:     opts.Operators,
		Detached:      opts.Detach,
		OwnerPID:      os.Getpid(),
		StartedAt:     time.Now().UTC(),
	}
	// Keep the ports of the previous run when they are free (a restarted cluster keeps its
	// address), else pick free ones.
	var prev [3]int
	if old != nil {
		prev = [3]int{old.EtcdPort, old.EtcdPeerPort, old.APIServerPort}
	}
	ports, err := freePorts(prev[:])
	if err != nil {
		return nil, err
	}
	st.EtcdPort, st.EtcdPeerPort, st.APIServerPort = ports[0], ports[1], ports[2]

	c := &Cluster{
		dir:        dir,
		kubeconfig: filepath.Join(dir, "kubeconfig"),
		st:         st,
		owned:      true,
		failed:     make(chan error, 1),
	}
	if !opts.Detach {
		c.spawner = newSpawner()
	}
	if err := c.writeConfig(token); err != nil {
		return nil, err
	}
	if err := c.start(ctx, bins, ops, opts, pools, progress); err != nil {
		c.stop(10 * time.Second)
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, bins *Binaries, ops []*OperatorBinaries, opts Options, pools []Pool, progress io.Writer) error {
	st, dir := c.st, c.dir
	pki := func(name string) string { return filepath.Join(dir, "pki", name) }
	loop := "http://127.0.0.1:"
	fmt.Fprintf(progress, "devcluster: starting etcd, kube-apiserver on https://127.0.0.1:%d (state in %s)\n", st.APIServerPort, dir)
	if err := c.run(bins, Etcd,
		"--name=devcluster",
		"--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+loop+strconv.Itoa(st.EtcdPort),
		"--advertise-client-urls="+loop+strconv.Itoa(st.EtcdPort),
		"--listen-peer-urls="+loop+strconv.Itoa(st.EtcdPeerPort),
		"--initial-advertise-peer-urls="+loop+strconv.Itoa(st.EtcdPeerPort),
		"--initial-cluster=devcluster="+loop+strconv.Itoa(st.EtcdPeerPort),
		"--unsafe-no-fsync=true",
		"--quota-backend-bytes=8589934592",
		"--log-level=warn",
	); err != nil {
		return err
	}
	if err := c.run(bins, KubeAPIServer,
		"--etcd-servers="+loop+strconv.Itoa(st.EtcdPort),
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(st.APIServerPort),
		"--cert-dir="+filepath.Join(dir, "pki", "apiserver-generated"),
		"--tls-cert-file="+pki("apiserver.crt"),
		"--tls-private-key-file="+pki("apiserver.key"),
		"--token-auth-file="+pki("tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+pki("sa.pub"),
		"--service-account-signing-key-file="+pki("sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		// No service account tokens in pods; and no node.kubernetes.io/not-ready taint on new
		// nodes: the node lifecycle controller that would lift it does not run (kwok's nodes
		// are Ready from the start).
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		"--allow-privileged=true",
		"--max-requests-inflight=1000",
		"--max-mutating-requests-inflight=500",
		"--profiling=false",
	); err != nil {
		return err
	}
	if err := c.waitReadyz(ctx); err != nil {
		return err
	}
	fmt.Fprintln(progress, "devcluster: kube-apiserver ready; starting kube-controller-manager, kwok")
	if err := c.run(bins, KubeControllerManager,
		"--kubeconfig="+c.kubeconfig,
		"--leader-elect=false",
		"--controllers=*,-serviceaccount-token,-nodeipam,-nodelifecycle",
		"--service-account-private-key-file="+pki("sa.key"),
		"--root-ca-file="+pki("ca.crt"),
		"--secure-port=0",
		"--kube-api-qps=500",
		"--kube-api-burst=1000",
		"--concurrent-job-syncs=20",
		"--concurrent-gc-syncs=40",
		"--profiling=false",
	); err != nil {
		return err
	}
	if err := c.run(bins, Kwok,
		"--kubeconfig="+c.kubeconfig,
		"--config="+filepath.Join(dir, "kwok-stages.yaml"),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector="+AnnotationKwokNode+"=fake",
		"--cidr=10.244.0.0/16",
		"--node-ip=10.0.0.1",
	); err != nil {
		return err
	}
	if opts.KubeScheduler {
		if err := c.run(bins, KubeScheduler,
			"--config="+filepath.Join(dir, "kube-scheduler.yaml"),
			"--secure-port=0",
			"--profiling=false",
		); err != nil {
			return err
		}
	}
	if err := c.waitDefaultServiceAccount(ctx); err != nil {
		return err
	}
	if len(ops) > 0 {
		if err := c.startOperators(ctx, ops, progress); err != nil {
			return err
		}
	} else if err := registerWebhooks(ctx, c.client, nil, nil); err != nil {
		// A cluster that ran operators before keeps their CRDs (harmless) but must lose their
		// webhooks, which nothing serves now.
		return err
	}
	if len(pools) > 0 {
		if err := c.syncNodes(ctx, pools, progress); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) syncNodes(ctx context.Context, pools []Pool, progress io.Writer) error {
	n := 0
	for _, p := range pools {
		n += p.Nodes
	}
	fmt.Fprintf(progress, "devcluster: creating %d fake GPU nodes\n", n)
	if err := SyncNodes(ctx, c.client, pools); err != nil {
		return err
	}
	return c.watch(ctx, "nodes Ready", func(ctx context.Context) error { return WaitNodesReady(ctx, c.client, pools) })
}

// watch runs f, failing early with the log tail of any component that exits meanwhile.
func (c *Cluster) watch(ctx context.Context, what string, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res := make(chan error, 1)
	go func() { res <- f(ctx) }()
	select {
	case err := <-res:
		if err != nil && ctx.Err() != nil {
			return fmt.Errorf("devcluster: waiting for %s: %w (logs in %s)", what, err, filepath.Join(c.dir, "logs"))
		}
		return err
	case err := <-c.failed:
		select {
		case c.failed <- err: // keep it for Failed()
		default:
		}
		return err
	}
}

func (c *Cluster) waitReadyz(ctx context.Context) error {
	tr, err := rest.TransportFor(c.restConfig)
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: tr, Timeout: 2 * time.Second}
	url := c.restConfig.Host + "/readyz"
	return c.watch(ctx, "kube-apiserver /readyz", func(ctx context.Context) error {
		var last string
		for {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			resp, err := hc.Do(req)
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
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
				return fmt.Errorf("%w (last answer: %s)", ctx.Err(), last)
			case <-time.After(200 * time.Millisecond):
			}
		}
	})
}

func (c *Cluster) waitDefaultServiceAccount(ctx context.Context) error {
	return c.watch(ctx, "the default service account (kube-controller-manager)", func(ctx context.Context) error {
		for {
			_, err := c.client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
			if err == nil {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
			case <-time.After(200 * time.Millisecond):
			}
		}
	})
}

// Kubeconfig returns the path of the cluster's kubeconfig (admin token, the cluster's CA).
func (c *Cluster) Kubeconfig() string { return c.kubeconfig }

// RESTConfig returns a copy of the admin REST config of the cluster (QPS 200, burst 400).
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.restConfig) }

// Client returns an admin clientset for the cluster.
func (c *Cluster) Client() kubernetes.Interface { return c.client }

// Operators returns the operators running in the cluster.
func (c *Cluster) Operators() []string { return slices.Clone(c.st.Operators) }

// Dir returns the cluster's directory.
func (c *Cluster) Dir() string { return c.dir }

// PIDs returns the process ids of the cluster's components by name.
func (c *Cluster) PIDs() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]int{}
	for _, p := range c.st.Processes {
		m[p.Name] = p.PID
	}
	return m
}

// Failed delivers an error, with the tail of its log, when a component this Cluster started
// exits while the cluster should be running (e.g. serve can select on it and stop). It never
// delivers for a reused cluster.
func (c *Cluster) Failed() <-chan error { return c.failed }

// Stop stops the processes this Cluster started (SIGTERM, then SIGKILL after 10 seconds or
// when ctx ends) and waits until they are gone. The directory is kept; a later Start reuses
// its data. Stopping a cluster that Start found running, rather than started, does nothing
// (use StopDir).
func (c *Cluster) Stop(ctx context.Context) error {
	if !c.owned {
		return nil
	}
	grace := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		grace = min(grace, time.Until(dl))
	}
	return c.stop(grace)
}

func (c *Cluster) stop(grace time.Duration) error {
	c.mu.Lock()
	c.stopping = true
	procs := append([]*proc(nil), c.procs...)
	c.mu.Unlock()
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		if err := terminate(p.PID, grace, p.done); err != nil {
			errs = append(errs, fmt.Errorf("%s (pid %d): %w", p.Name, p.PID, err))
		}
	}
	if c.spawner != nil {
		c.spawner.close()
		c.spawner = nil
	}
	c.mu.Lock()
	c.procs = nil
	c.mu.Unlock()
	// Remove the record unless another Start has replaced it meanwhile.
	if cur, _ := readState(c.dir); cur != nil && cur.OwnerPID == c.st.OwnerPID && cur.StartedAt.Equal(c.st.StartedAt) {
		os.Remove(filepath.Join(c.dir, "state.json"))
	}
	return errors.Join(errs...)
}
