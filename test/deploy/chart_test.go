// Package deploy tests what operators install Arbiter with: the Helm chart (rendered and
// linted with Helm's Go SDK, its RBAC proven on the local control plane), the Dockerfile and
// docker-compose.yml (loaded with the Compose specification's Go library). Each flag or
// ARBITER_* variable they pass is checked against what `arbiter serve` accepts.
package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/workloads"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/mod/modfile"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

var chartDir = filepath.Join("..", "..", "deploy", "helm", "arbiter")

// rendered is a chart's manifest decoded: typed objects for the kinds client-go knows,
// unstructured ones for the rest (ServiceMonitor, PrometheusRule).
type rendered struct {
	objects []runtime.Object
	notes   string
}

// render installs the chart client-only and dry-run (what `helm template` does) into
// namespace with vals.
func render(t *testing.T, namespace string, vals map[string]any) (rendered, error) {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	install := action.NewInstall(&action.Configuration{})
	install.ClientOnly, install.DryRun = true, true
	install.ReleaseName, install.Namespace = "arb", namespace
	install.KubeVersion = kubeVersion(t)
	rel, err := install.Run(chrt, vals)
	if err != nil {
		return rendered{}, err
	}
	var out rendered
	out.notes = rel.Info.Notes
	decoder := serializer.NewCodecFactory(scheme.Scheme).UniversalDeserializer()
	for name, doc := range releaseutil.SplitManifests(rel.Manifest) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		obj, _, err := decoder.Decode([]byte(doc), nil, nil)
		if runtime.IsNotRegisteredError(err) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			obj, err = u, nil
		}
		if err != nil {
			t.Fatalf("decode %s: %v\n%s", name, err, doc)
		}
		out.objects = append(out.objects, obj)
	}
	return out, nil
}

func mustRender(t *testing.T, namespace string, vals map[string]any) rendered {
	t.Helper()
	r, err := render(t, namespace, vals)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return r
}

// one finds the single object of type T, or fails.
func one[T runtime.Object](t *testing.T, r rendered) T {
	t.Helper()
	found := all[T](r)
	if len(found) != 1 {
		var zero T
		t.Fatalf("rendered %d objects of type %T, want 1", len(found), zero)
	}
	return found[0]
}

func all[T runtime.Object](r rendered) []T {
	var found []T
	for _, o := range r.objects {
		if x, ok := o.(T); ok {
			found = append(found, x)
		}
	}
	return found
}

func kinds(r rendered) []string {
	var ks []string
	for _, o := range r.objects {
		ks = append(ks, o.GetObjectKind().GroupVersionKind().Kind)
	}
	slices.Sort(ks)
	return ks
}

// kubeVersion is the Kubernetes version Arbiter is built against — go.mod's k8s.io/api v0.x.y
// is Kubernetes v1.x.y — which the chart is rendered for. (Helm's default comes from its
// build flags, which a test binary does not have.)
func kubeVersion(t *testing.T) *chartutil.KubeVersion {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range mod.Require {
		if r.Mod.Path == "k8s.io/api" {
			v, err := chartutil.ParseKubeVersion(strings.Replace(r.Mod.Version, "v0.", "v1.", 1))
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatal("go.mod does not require k8s.io/api")
	return nil
}

// withDatabase is the least a release needs: the Secret holding the database URL.
func withDatabase() map[string]any {
	return map[string]any{"database": map[string]any{"existingSecret": "arbiter-db"}}
}

// TestChartLints: `helm lint --strict` finds nothing to say, with the chart's defaults plus
// the one value it requires, and with everything optional turned on.
func TestChartLints(t *testing.T) {
	for name, vals := range map[string]map[string]any{
		"defaults": withDatabase(),
		"everything on": {
			"database": map[string]any{"url": "postgres://arbiter:pw@db:5432/arbiter"},
			"oidc":     map[string]any{"issuer": "https://idp.example.com", "clientID": "arbiter", "clientSecret": "s3cret"},
			"metrics": map[string]any{
				"serviceMonitor": map[string]any{"enabled": true},
				"prometheusRule": map[string]any{"enabled": true},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			lint := action.NewLint()
			lint.Strict = true
			lint.Namespace = "arbiter-system"
			lint.KubeVersion = kubeVersion(t)
			res := lint.Run([]string{chartDir}, vals)
			for _, m := range res.Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("lint: %s", m)
				}
			}
			for _, err := range res.Errors {
				t.Errorf("lint error: %v", err)
			}
			if res.TotalChartsLinted != 1 {
				t.Errorf("linted %d charts, want 1", res.TotalChartsLinted)
			}
		})
	}
}

// TestChartDeployment: the Deployment the defaults render — two replicas electing a leader,
// probes, resources, never root, a read-only root file system, secrets from Secrets — and
// every flag and ARBITER_* variable it passes is one `arbiter serve` accepts.
func TestChartDeployment(t *testing.T) {
	r := mustRender(t, "arbiter-system", withDatabase())
	want := []string{"ClusterRole", "ClusterRoleBinding", "Deployment", "PodDisruptionBudget", "Role", "RoleBinding", "Service", "ServiceAccount"}
	if got := kinds(r); !slices.Equal(got, want) {
		t.Errorf("kinds rendered by default: %v, want %v", got, want)
	}
	d := one[*appsv1.Deployment](t, r)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2", d.Spec.Replicas)
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("args %q do not start with serve", c.Args)
	}
	cfg := parseServe(t, "the chart", c.Args[1:], c.Env)
	if !cfg.LeaderElect {
		t.Errorf("the Deployment's args %q leave leader election off", c.Args)
	}
	if cfg.SchedulerName != "arbiter" || cfg.DatabaseURL != "" {
		t.Errorf("scheduler name %q, database URL %q on the command line; want arbiter and none", cfg.SchedulerName, cfg.DatabaseURL)
	}
	if env := envVar(c.Env, "ARBITER_DATABASE_URL"); env == nil || env.ValueFrom == nil || env.ValueFrom.SecretKeyRef == nil ||
		env.ValueFrom.SecretKeyRef.Name != "arbiter-db" || env.ValueFrom.SecretKeyRef.Key != "database-url" {
		t.Errorf("ARBITER_DATABASE_URL is %+v, want it from Secret arbiter-db key database-url", env)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil {
		t.Fatalf("probes: liveness %+v, readiness %+v; want HTTP probes", c.LivenessProbe, c.ReadinessProbe)
	}
	if c.LivenessProbe.HTTPGet.Port.String() != "http" || len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("probes on port %s, container ports %+v; want the named port http = 8080", c.LivenessProbe.HTTPGet.Port.String(), c.Ports)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v: want CPU and memory requests and a memory limit", c.Resources)
	}
	psc, sc := pod.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("pod security context %+v: want runAsNonRoot and a non-zero user", psc)
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container security context %+v: want a read-only root, no privilege escalation, every capability dropped", sc)
	}
	sa := one[*corev1.ServiceAccount](t, r)
	if pod.ServiceAccountName != sa.Name {
		t.Errorf("pods run as %q, the chart's ServiceAccount is %q", pod.ServiceAccountName, sa.Name)
	}
	svc := one[*corev1.Service](t, r)
	if !selects(svc.Spec.Selector, d.Spec.Template.Labels) || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "http" {
		t.Errorf("Service %+v does not send port http to the Deployment's pods %v", svc.Spec, d.Spec.Template.Labels)
	}
	pdb := one[*policyv1.PodDisruptionBudget](t, r)
	if !selects(pdb.Spec.Selector.MatchLabels, d.Spec.Template.Labels) || pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget %+v: want at most 1 of the Deployment's pods down", pdb.Spec)
	}
	if !strings.Contains(r.notes, "schedulerName: arbiter") {
		t.Errorf("NOTES.txt does not say how pods opt in:\n%s", r.notes)
	}
}

// TestChartRBACIsNarrow: no wildcard, nothing on Secrets or ConfigMaps, no verb that grants
// more rights (escalate, bind, impersonate) — TestChartRBACIsEnough proves the rest is used.
func TestChartRBACIsNarrow(t *testing.T) {
	r := mustRender(t, "arbiter-system", withDatabase())
	var rules []rbacv1.PolicyRule
	rules = append(rules, one[*rbacv1.ClusterRole](t, r).Rules...)
	rules = append(rules, one[*rbacv1.Role](t, r).Rules...)
	for _, rule := range rules {
		for _, list := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs} {
			if slices.Contains(list, "*") {
				t.Errorf("a wildcard in %+v", rule)
			}
		}
		for _, res := range []string{"secrets", "configmaps", "serviceaccounts/token"} {
			if slices.Contains(rule.Resources, res) {
				t.Errorf("a rule on %s: %+v", res, rule)
			}
		}
		for _, verb := range []string{"escalate", "bind", "impersonate"} {
			if slices.Contains(rule.Verbs, verb) {
				t.Errorf("verb %s in %+v", verb, rule)
			}
		}
		if len(rule.NonResourceURLs) > 0 {
			t.Errorf("non-resource URLs in %+v: discovery and /readyz are every authenticated user's already", rule)
		}
	}
	crb := one[*rbacv1.ClusterRoleBinding](t, r)
	sa := one[*corev1.ServiceAccount](t, r)
	if len(crb.Subjects) != 1 || crb.Subjects[0].Kind != "ServiceAccount" || crb.Subjects[0].Name != sa.Name || crb.Subjects[0].Namespace != "arbiter-system" {
		t.Errorf("the ClusterRoleBinding binds %+v, want only the chart's ServiceAccount", crb.Subjects)
	}
}

// TestChartOptions: OIDC's client secret comes from a Secret (the chart's own when given
// inline), a Lease name set by value reaches both the flag and the Role, the monitoring
// objects appear only when asked for, and releases that could not work are refused.
func TestChartOptions(t *testing.T) {
	t.Run("oidc and an inline database URL", func(t *testing.T) {
		r := mustRender(t, "ops", map[string]any{
			"database":    map[string]any{"url": "postgres://a:b@db/arbiter"},
			"oidc":        map[string]any{"issuer": "https://idp.example.com", "clientID": "arbiter", "clientSecret": "s3cret"},
			"adminGroups": "gpu-admins",
		})
		secret := one[*corev1.Secret](t, r)
		if string(secret.Data["database-url"]) != "postgres://a:b@db/arbiter" || string(secret.Data["oidc-client-secret"]) != "s3cret" {
			t.Errorf("the chart's Secret holds %v", secret.Data)
		}
		c := one[*appsv1.Deployment](t, r).Spec.Template.Spec.Containers[0]
		for _, name := range []string{"ARBITER_DATABASE_URL", "ARBITER_OIDC_CLIENT_SECRET"} {
			if env := envVar(c.Env, name); env == nil || env.ValueFrom == nil || env.ValueFrom.SecretKeyRef == nil || env.ValueFrom.SecretKeyRef.Name != secret.Name {
				t.Errorf("%s is %+v, want it from Secret %s", name, env, secret.Name)
			}
		}
		if strings.Contains(strings.Join(c.Args, " "), "s3cret") {
			t.Errorf("the client secret is on the command line: %q", c.Args)
		}
		cfg := parseServe(t, "the chart", c.Args[1:], c.Env)
		if cfg.OIDCIssuer != "https://idp.example.com" || cfg.OIDCClientID != "arbiter" || cfg.AdminGroups != "gpu-admins" {
			t.Errorf("parsed %+v", cfg)
		}
	})
	t.Run("namespace rules", func(t *testing.T) {
		c := one[*appsv1.Deployment](t, mustRender(t, "ops", withDatabase())).Spec.Template.Spec.Containers[0]
		if cfg := parseServe(t, "the chart", c.Args[1:], c.Env); cfg.MaxProjectNamespaces != 20 || cfg.ReservedNamespaces != "kube-system,kube-public,kube-node-lease,default" {
			t.Errorf("by default: max %d, reserved %q", cfg.MaxProjectNamespaces, cfg.ReservedNamespaces)
		}
		vals := withDatabase()
		vals["reservedNamespaces"], vals["maxProjectNamespaces"] = "kube-system,default,monitoring", 5
		c = one[*appsv1.Deployment](t, mustRender(t, "ops", vals)).Spec.Template.Spec.Containers[0]
		if cfg := parseServe(t, "the chart", c.Args[1:], c.Env); cfg.MaxProjectNamespaces != 5 || cfg.ReservedNamespaces != "kube-system,default,monitoring" {
			t.Errorf("set: max %d, reserved %q from args %q", cfg.MaxProjectNamespaces, cfg.ReservedNamespaces, c.Args)
		}
	})
	t.Run("dry-run bounds", func(t *testing.T) {
		c := one[*appsv1.Deployment](t, mustRender(t, "ops", withDatabase())).Spec.Template.Spec.Containers[0]
		if cfg := parseServe(t, "the chart", c.Args[1:], c.Env); cfg.DryRunsPerReplica != 8 || cfg.DryRunsPerCaller != 2 {
			t.Errorf("by default: %d per replica, %d per caller", cfg.DryRunsPerReplica, cfg.DryRunsPerCaller)
		}
		vals := withDatabase()
		vals["dryRunsPerReplica"], vals["dryRunsPerCaller"] = 16, 3
		c = one[*appsv1.Deployment](t, mustRender(t, "ops", vals)).Spec.Template.Spec.Containers[0]
		if cfg := parseServe(t, "the chart", c.Args[1:], c.Env); cfg.DryRunsPerReplica != 16 || cfg.DryRunsPerCaller != 3 {
			t.Errorf("set: %d per replica, %d per caller from args %q", cfg.DryRunsPerReplica, cfg.DryRunsPerCaller, c.Args)
		}
	})
	t.Run("audit retention", func(t *testing.T) {
		c := one[*appsv1.Deployment](t, mustRender(t, "ops", withDatabase())).Spec.Template.Spec.Containers[0]
		if cfg := parseServe(t, "the chart", c.Args[1:], c.Env); cfg.AuditRetentionDays != 400 {
			t.Errorf("by default: audit retention %d days, want 400", cfg.AuditRetentionDays)
		}
		vals := withDatabase()
		vals["auditRetentionDays"] = 730
		c = one[*appsv1.Deployment](t, mustRender(t, "ops", vals)).Spec.Template.Spec.Containers[0]
		if cfg := parseServe(t, "the chart", c.Args[1:], c.Env); cfg.AuditRetentionDays != 730 {
			t.Errorf("set: audit retention %d days from args %q, want 730", cfg.AuditRetentionDays, c.Args)
		}
	})
	t.Run("usage history", func(t *testing.T) {
		c := one[*appsv1.Deployment](t, mustRender(t, "ops", withDatabase())).Spec.Template.Spec.Containers[0]
		cfg := parseServe(t, "the chart", c.Args[1:], c.Env)
		if got, want := [4]time.Duration{cfg.UsageInterval, cfg.UsageRawRetention, cfg.UsageHourlyRetention, cfg.UsageDailyRetention},
			[4]time.Duration{30 * time.Second, 48 * time.Hour, 90 * 24 * time.Hour, 0}; got != want {
			t.Errorf("by default: usage interval and retentions %v, want %v", got, want)
		}
		vals := withDatabase()
		vals["usageHistory"] = map[string]any{"interval": "1m", "rawRetention": "24h", "hourlyRetention": "720h", "dailyRetention": "17520h"}
		c = one[*appsv1.Deployment](t, mustRender(t, "ops", vals)).Spec.Template.Spec.Containers[0]
		cfg = parseServe(t, "the chart", c.Args[1:], c.Env)
		if got, want := [4]time.Duration{cfg.UsageInterval, cfg.UsageRawRetention, cfg.UsageHourlyRetention, cfg.UsageDailyRetention},
			[4]time.Duration{time.Minute, 24 * time.Hour, 720 * time.Hour, 17520 * time.Hour}; got != want {
			t.Errorf("set: usage interval and retentions %v from args %q, want %v", got, c.Args, want)
		}
	})
	t.Run("cluster id", func(t *testing.T) {
		c := one[*appsv1.Deployment](t, mustRender(t, "ops", withDatabase())).Spec.Template.Spec.Containers[0]
		if cfg := parseServe(t, "the chart", c.Args[1:], c.Env); cfg.ClusterID != "" {
			t.Errorf("by default: cluster id %q, want none (the database keeps its own)", cfg.ClusterID)
		}
		vals := withDatabase()
		vals["clusterId"] = "d73a738f-fab3-430a-8fa3-5241493d7128"
		c = one[*appsv1.Deployment](t, mustRender(t, "ops", vals)).Spec.Template.Spec.Containers[0]
		if cfg := parseServe(t, "the chart", c.Args[1:], c.Env); cfg.ClusterID != "d73a738f-fab3-430a-8fa3-5241493d7128" {
			t.Errorf("set: cluster id %q from args %q", cfg.ClusterID, c.Args)
		}
	})
	t.Run("lease name", func(t *testing.T) {
		vals := withDatabase()
		vals["leaderElection"] = map[string]any{"id": "arbiter-prod"}
		r := mustRender(t, "ops", vals)
		role := one[*rbacv1.Role](t, r)
		if !slices.ContainsFunc(role.Rules, func(rule rbacv1.PolicyRule) bool { return slices.Equal(rule.ResourceNames, []string{"arbiter-prod"}) }) {
			t.Errorf("the Role's rules %+v do not name the Lease arbiter-prod", role.Rules)
		}
		c := one[*appsv1.Deployment](t, r).Spec.Template.Spec.Containers[0]
		if !slices.Contains(c.Args, "--leader-election-id=arbiter-prod") {
			t.Errorf("args %q do not name the Lease arbiter-prod", c.Args)
		}
		parseServe(t, "the chart", c.Args[1:], c.Env)
	})
	t.Run("monitoring", func(t *testing.T) {
		if ks := kinds(mustRender(t, "ops", withDatabase())); slices.Contains(ks, "ServiceMonitor") || slices.Contains(ks, "PrometheusRule") {
			t.Errorf("monitoring objects rendered by default: %v", ks)
		}
		vals := withDatabase()
		vals["metrics"] = map[string]any{"serviceMonitor": map[string]any{"enabled": true}, "prometheusRule": map[string]any{"enabled": true}}
		r := mustRender(t, "ops", vals)
		got := map[string]*unstructured.Unstructured{}
		for _, u := range all[*unstructured.Unstructured](r) {
			got[u.GetKind()] = u
		}
		sm, pr := got["ServiceMonitor"], got["PrometheusRule"]
		if sm == nil || pr == nil {
			t.Fatalf("monitoring on rendered %v", kinds(r))
		}
		endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		if len(endpoints) != 1 || endpoints[0].(map[string]any)["path"] != "/metrics" || endpoints[0].(map[string]any)["port"] != "http" {
			t.Errorf("ServiceMonitor endpoints %v, want /metrics on port http", endpoints)
		}
		groups, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
		if len(groups) != 1 || len(groups[0].(map[string]any)["rules"].([]any)) == 0 {
			t.Errorf("PrometheusRule groups %v", groups)
		}
	})
	t.Run("refused", func(t *testing.T) {
		for name, vals := range map[string]map[string]any{
			"no database": {},
			"two replicas without leader election": {
				"database": map[string]any{"existingSecret": "db"}, "leaderElection": map[string]any{"enabled": false},
			},
			"an issuer without a client id": {
				"database": map[string]any{"existingSecret": "db"}, "oidc": map[string]any{"issuer": "https://idp.example.com"},
			},
		} {
			if _, err := render(t, "ops", vals); err == nil {
				t.Errorf("%s: rendered", name)
			}
		}
		single := map[string]any{"database": map[string]any{"existingSecret": "db"}, "leaderElection": map[string]any{"enabled": false}, "replicaCount": 1}
		r := mustRender(t, "ops", single)
		c := one[*appsv1.Deployment](t, r).Spec.Template.Spec.Containers[0]
		if parseServe(t, "the chart", c.Args[1:], c.Env).LeaderElect {
			t.Errorf("leaderElection.enabled=false still elects: %q", c.Args)
		}
		if ks := kinds(r); slices.Contains(ks, "Role") {
			t.Errorf("a Lease Role without leader election: %v", ks)
		}
	})
}

func envVar(env []corev1.EnvVar, name string) *corev1.EnvVar {
	for i := range env {
		if env[i].Name == name {
			return &env[i]
		}
	}
	return nil
}

// selects reports whether a selector's labels are all on the object's labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestChartRBACCreatesExactlyWhatIsSubmitted: the ClusterRole creates and deletes every kind a
// Workloads V2 manifest may be, and creates and deletes nothing else but what Arbiter makes
// itself (pod bindings, events, Services of native submissions, the dictionary's
// PriorityClasses; evicted pods are deleted).
func TestChartRBACCreatesExactlyWhatIsSubmitted(t *testing.T) {
	r := mustRender(t, "arbiter-system", withDatabase())
	granted := map[string]map[string]bool{"create": {}, "delete": {}}
	for _, rule := range one[*rbacv1.ClusterRole](t, r).Rules {
		for _, verb := range rule.Verbs {
			if granted[verb] == nil {
				continue
			}
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					granted[verb][g+"/"+res] = true
				}
			}
		}
	}
	want := map[string]map[string]bool{
		"create": {"/pods/binding": true, "/events": true, "/services": true, "scheduling.k8s.io/priorityclasses": true},
		"delete": {"scheduling.k8s.io/priorityclasses": true},
	}
	for _, k := range workloads.ManifestKinds {
		want["create"][k.Group+"/"+k.Resource] = true
		want["delete"][k.Group+"/"+k.Resource] = true
	}
	if diff := cmp.Diff(want, granted); diff != "" {
		t.Errorf("the ClusterRole's create and delete (-want +got):\n%s", diff)
	}
}

// TestChartRBACRunsADistributedTrainingAsAPyTorchJob: a distributed training is made as a
// PyTorchJob where training-operator runs, so the ClusterRole creates, deletes, stops and runs
// again (patch of runPolicy.suspend) and reads back (list) PyTorchJobs. Whether the CRD is
// served is asked of discovery, which every authenticated client may read.
func TestChartRBACRunsADistributedTrainingAsAPyTorchJob(t *testing.T) {
	r := mustRender(t, "arbiter-system", withDatabase())
	var verbs []string
	for _, rule := range one[*rbacv1.ClusterRole](t, r).Rules {
		if slices.Contains(rule.APIGroups, "kubeflow.org") && slices.Contains(rule.Resources, "pytorchjobs") {
			verbs = append(verbs, rule.Verbs...)
		}
	}
	for _, want := range []string{"create", "delete", "patch", "list"} {
		if !slices.Contains(verbs, want) {
			t.Errorf("the ClusterRole grants %v on kubeflow.org/pytorchjobs; it needs %s", verbs, want)
		}
	}
}
