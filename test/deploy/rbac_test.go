package deploy

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/internal/testkit/servetest"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/server"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/workload/objects"
)

var clusterDir string

func TestMain(m *testing.M) {
	testdb.Main(m, func() {
		if clusterDir != "" {
			_ = devcluster.StopDir(clusterDir)
			os.RemoveAll(clusterDir)
		}
	})
}

// TestChartRBACIsEnough applies the chart's ServiceAccount, ClusterRole, Role and bindings to
// the local control plane and runs `arbiter serve`, configured by the chart's own args, with
// nothing but a token of that ServiceAccount (TokenRequest), as a pod of the release would.
// It must schedule a Job (watch, bind, events, pending reasons on pods/status, the
// dictionary's PriorityClasses) — the ClusterRole is enough — while reading Secrets with the
// same token is forbidden, and the probe paths the chart names must answer.
func TestChartRBACIsEnough(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var err error
	if clusterDir, err = os.MkdirTemp("", "arbiter-deploy-cluster-"); err != nil {
		t.Fatal(err)
	}
	pool := devcluster.Pool{Name: "rbac", Nodes: 1, GPUs: 2}
	cluster, err := devcluster.Start(ctx, devcluster.Options{Dir: clusterDir, Nodes: "rbac=1x2", Progress: os.Stderr, Timeout: 4 * time.Minute})
	if err != nil {
		t.Fatalf("local control plane: %v", err)
	}
	admin := cluster.Client()

	const ns = "arbiter-system"
	r := mustRender(t, ns, withDatabase())
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := one[*corev1.ServiceAccount](t, r)
	apply(ctx, t, admin, r)
	// A Secret in Arbiter's own namespace, which its token must not read.
	if _, err := admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "arbiter-db"},
		StringData: map[string]string{"database-url": "postgres://nobody"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	tok, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s: %v", sa.Name, err)
	}
	kubeconfig := tokenKubeconfig(t, cluster.RESTConfig(), tok.Status.Token)
	tokenCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	asArbiter := kubernetes.NewForConfigOrDie(tokenCfg)

	// Outside the ClusterRole: Secrets, in its own namespace and anywhere.
	if _, err := asArbiter.CoreV1().Secrets(ns).Get(ctx, "arbiter-db", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("reading Secret %s/arbiter-db with the chart's ServiceAccount: %v, want Forbidden", ns, err)
	}
	if _, err := asArbiter.CoreV1().Secrets("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing Secrets cluster-wide with the chart's ServiceAccount: %v, want Forbidden", err)
	}

	// Arbiter's configuration: the Deployment's args, the database and cluster a pod of the
	// release would get from its Secret and its ServiceAccount.
	d := one[*appsv1.Deployment](t, r)
	c := d.Spec.Template.Spec.Containers[0]
	if flags := serveFlags(t); flags["leader-election-namespace"] {
		// In a pod Arbiter reads its namespace from the ServiceAccount's mount; here it is told.
		t.Setenv(server.EnvName("leader-election-namespace"), ns)
	}
	cfg := parseServe(t, "the chart", c.Args[1:], c.Env)
	cfg.Addr, cfg.DataDir, cfg.Kubeconfig, cfg.AdminPassword = "127.0.0.1:0", t.TempDir(), kubeconfig, "rbac-test-password"
	cfg.DatabaseURL = testdb.NewURL(t)
	ns2 := project(ctx, t, cfg.DatabaseURL, pool)
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns2}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	url := serve(t, cfg)

	for _, probe := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		res, err := http.Get(url + probe.HTTPGet.Path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("probe %s = %d, want 200", probe.HTTPGet.Path, res.StatusCode)
		}
	}

	fits := objects.Job("fits", ns2).Pods(1).GPUs(1).CPU("1").SchedulerName(cfg.SchedulerName).Obj()
	tooBig := objects.Job("too-big", ns2).Pods(1).GPUs(4).CPU("1").SchedulerName(cfg.SchedulerName).Obj()
	if _, err := admin.BatchV1().Jobs(ns2).Create(ctx, fits, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.BatchV1().Jobs(ns2).Create(ctx, tooBig, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	podOf := func(job string) *corev1.Pod {
		list, err := admin.CoreV1().Pods(ns2).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + job})
		if err != nil || len(list.Items) == 0 {
			return nil
		}
		return &list.Items[0]
	}
	poll.Until(t, "Arbiter binds the Job's pod", 3*time.Minute, func() bool {
		p := podOf("fits")
		return p != nil && p.Spec.NodeName == pool.NodeName(0)
	})
	poll.Until(t, "Arbiter records Scheduled on the pod", time.Minute, func() bool {
		p := podOf("fits")
		list, err := admin.CoreV1().Events(ns2).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + p.Name})
		if err != nil {
			return false
		}
		for _, ev := range list.Items {
			if ev.Reason == "Scheduled" && ev.ReportingController == cfg.SchedulerName {
				return true
			}
		}
		return false
	})
	poll.Until(t, "Arbiter writes why the other Job waits (pods/status)", time.Minute, func() bool {
		p := podOf("too-big")
		if p == nil {
			return false
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason != "" && cond.Message != "" {
				return true
			}
		}
		return false
	})
	classes, err := admin.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=arbiter"})
	if err != nil || len(classes.Items) == 0 {
		t.Errorf("Arbiter created no PriorityClass of its dictionary (%v)", err)
	}
	submitsWithChartRBAC(ctx, t, admin, url, cfg.DatabaseURL, ns2)
}

// apply creates the chart's ServiceAccount and RBAC objects as the cluster admin.
func apply(ctx context.Context, t *testing.T, c kubernetes.Interface, r rendered) {
	t.Helper()
	var err error
	for _, o := range r.objects {
		switch o := o.(type) {
		case *corev1.ServiceAccount:
			_, err = c.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = c.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = c.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = c.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatalf("apply %T: %v", o, err)
		}
	}
}

// tokenKubeconfig writes a kubeconfig for the API server of admin with only a bearer token.
func tokenKubeconfig(t *testing.T, admin *rest.Config, token string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthority: admin.TLSClientConfig.CAFile,
		CertificateAuthorityData: admin.TLSClientConfig.CAData}
	kc.AuthInfos["arbiter"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "arbiter"}
	kc.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// project gives the node pool, a department and a project owning a namespace, in Arbiter's
// database, and returns the namespace.
func project(ctx context.Context, t *testing.T, dbURL string, pool devcluster.Pool) string {
	t.Helper()
	pg, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	st := store.New(pg)
	who := store.Actor{Subject: "deploy-test", SubjectType: "user"}
	np, err := st.CreateNodePool(ctx, store.NodePoolUpdate{Name: opt(pool.Name), LabelKey: opt(devcluster.LabelNodePool), LabelValue: opt(pool.Name)}, who)
	if err != nil {
		t.Fatal(err)
	}
	dept, err := st.CreateDepartment(ctx, store.DepartmentUpdate{Name: opt("research"),
		Resources: opt([]store.QuotaInput{{NodePoolID: &np.ID, Deserved: 8}})}, who)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "team-vision"
	limit := -1
	if _, err := st.CreateProject(ctx, store.ProjectUpdate{Name: opt("vision"), DepartmentID: opt(dept.ID), Namespaces: opt([]string{ns}),
		NodePools: opt([]uuid.UUID{np.ID}), Resources: opt([]store.QuotaInput{{NodePoolID: &np.ID, Deserved: 2, Limit: &limit}})}, who); err != nil {
		t.Fatal(err)
	}
	return ns
}

// serve runs server.Serve with cfg until the test ends and returns its URL.
func serve(t *testing.T, cfg server.Config) string {
	t.Helper()
	return servetest.Serve(t, cfg, slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func opt[T any](v T) store.Optional[T] { return store.Optional[T]{Set: true, Value: &v} }
