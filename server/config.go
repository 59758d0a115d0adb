// Package server is Arbiter's composition root: configuration, wiring, start and orderly
// shutdown of everything the process runs.
package server

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
)

// Config is what `arbiter serve` reads from flags, each with an ARBITER_* environment twin
// (README "Configuration"; docs/operations.md).
type Config struct {
	Addr             string
	DataDir          string
	DatabaseURL      string
	DatabaseTimeout  time.Duration // bounds each database call; 0: store.DefaultTimeout
	HTTPReadTimeout  time.Duration // a whole request, body included; 0: DefaultHTTPReadTimeout
	HTTPWriteTimeout time.Duration // from the end of the request's headers to the end of the answer; 0: DefaultHTTPWriteTimeout
	HTTPIdleTimeout  time.Duration // a kept-alive connection between requests; 0: DefaultHTTPIdleTimeout
	Kubeconfig       string
	SchedulerName    string
	OIDCIssuer       string
	OIDCClientID     string
	OIDCClientSecret string
	OIDCRedirectURL  string
	OIDCGroupsClaim  string
	AdminSubjects    string // comma-separated OIDC subjects or emails that are system admins
	AdminGroups      string // comma-separated OIDC groups whose members are system admins
	AdminPassword    string // the bootstrap admin's password (local login); prefer the environment
	SessionIdle      time.Duration
	SessionLifetime  time.Duration
	TrustedProxies   string // comma-separated CIDRs whose X-Forwarded-For/-Proto are believed
	Demo             bool
	DemoSeed         uint64 // the demo mix's seed; 0 draws one from the clock
	LeaderElect      bool
	MetricsAddr      string // a listener of its own for /metrics; empty: on Addr beside the console
	// Leader election (server/leader.go; docs/operations.md "High availability").
	LeaderElectionNamespace string        // empty: the pod's namespace in a cluster, else "default"
	LeaderElectionID        string        // the Lease's name; empty: arbiter-<scheduler name>
	LeaderElectionIdentity  string        // this replica's name in the Lease; empty: <hostname>_<random>
	LeaseDuration           time.Duration // 0: DefaultLeaseDuration
	LeaseRenewDeadline      time.Duration // 0: DefaultRenewDeadline
	LeaseRetryPeriod        time.Duration // 0: DefaultRetryPeriod
	// RecordInterval is the least time between two writes of workload records
	// (server/records.go); 0: DefaultRecordInterval.
	RecordInterval time.Duration
	LogLevel       string
	LogFormat      string
	// Namespaces projects may claim (docs/organization.md "Rules and their answers").
	ReservedNamespaces   string // comma-separated; Arbiter's own namespace is reserved besides
	MaxProjectNamespaces int    // per project
	// Dry runs running at once (web.DryRunLimits; docs/api.md "Dry runs"); 0: the default.
	DryRunsPerReplica int
	DryRunsPerCaller  int
	// AuditRetentionDays is how many days the audit log keeps a row at least; months past it
	// are dropped whole (docs/operations.md "Audit log retention").
	AuditRetentionDays int
	// Usage history (server/usage_recorder.go; docs/operations.md "Usage history"): the leader
	// records a sample every UsageInterval (0: DefaultUsageInterval) and keeps each level of
	// the history as long as its retention (0: store.DefaultUsageRetention's; a daily
	// retention of 0 keeps daily rows forever).
	UsageInterval        time.Duration
	UsageRawRetention    time.Duration
	UsageHourlyRetention time.Duration
	UsageDailyRetention  time.Duration
	// ClusterID, if set, becomes the installation's cluster id (store.Store.SetClusterID): a
	// team coming from Run:ai keeps its cluster's id, and the scripts that send it.
	ClusterID string
}

// ParseConfig reads the flags in args, falling back to the environment for each flag the
// command line leaves out (flag --data-dir ↔ ARBITER_DATA_DIR).
func ParseConfig(name string, args []string, output io.Writer) (Config, error) {
	var c Config
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "address the console and API listen on")
	fs.StringVar(&c.DataDir, "data-dir", "./.arbiter", "private Postgres data and local control plane state")
	fs.StringVar(&c.DatabaseURL, "database-url", "", "PostgreSQL URL; empty starts a private PostgreSQL in the data dir")
	fs.DurationVar(&c.DatabaseTimeout, "database-timeout", 5*time.Second, "bound on each database call (pool acquire, query, statement); past it the API answers 503")
	fs.DurationVar(&c.HTTPReadTimeout, "http-read-timeout", DefaultHTTPReadTimeout, "time a client has to send a whole request, body included")
	fs.DurationVar(&c.HTTPWriteTimeout, "http-write-timeout", DefaultHTTPWriteTimeout, "time from a request's headers to the end of its answer")
	fs.DurationVar(&c.HTTPIdleTimeout, "http-idle-timeout", DefaultHTTPIdleTimeout, "how long an idle kept-alive connection stays open")
	fs.StringVar(&c.Kubeconfig, "kubeconfig", "", "kubeconfig path; empty uses $KUBECONFIG, else in-cluster config, else a local control plane")
	fs.StringVar(&c.SchedulerName, "scheduler-name", "arbiter", "pods opt in with spec.schedulerName equal to this")
	fs.StringVar(&c.OIDCIssuer, "oidc-issuer", "", "OIDC issuer URL; empty means local login")
	fs.StringVar(&c.OIDCClientID, "oidc-client-id", "", "OIDC client id")
	fs.StringVar(&c.OIDCClientSecret, "oidc-client-secret", "", "OIDC client secret (prefer the environment)")
	fs.StringVar(&c.OIDCRedirectURL, "oidc-redirect-url", "", "OIDC redirect URL")
	fs.StringVar(&c.OIDCGroupsClaim, "oidc-groups-claim", "groups", "ID token claim that lists the user's groups")
	fs.StringVar(&c.AdminSubjects, "admin-subjects", "", "comma-separated OIDC subjects or emails that are system admins")
	fs.StringVar(&c.AdminGroups, "admin-groups", "", "comma-separated OIDC groups whose members are system admins")
	fs.StringVar(&c.AdminPassword, "admin-password", "", "local login: the admin's password (prefer ARBITER_ADMIN_PASSWORD); empty generates one on first start")
	fs.DurationVar(&c.SessionIdle, "session-idle-timeout", 2*time.Hour, "sign out after this long without a request")
	fs.DurationVar(&c.SessionLifetime, "session-lifetime", 12*time.Hour, "sign out this long after signing in, whatever the activity")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", "", "comma-separated CIDRs of reverse proxies whose X-Forwarded-For and X-Forwarded-Proto are believed; empty trusts none")
	fs.BoolVar(&c.Demo, "demo", false, "demo node pools, departments, projects and workloads")
	fs.Uint64Var(&c.DemoSeed, "demo-seed", 0, "seed of the demo's workload mix, so that two runs submit the same jobs; 0 draws one from the clock (logged)")
	fs.BoolVar(&c.LeaderElect, "leader-elect", false, "run the scheduler loop only while holding the lease (on by default in a cluster)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", "", "address /metrics (Prometheus) listens on by itself; empty serves it on --addr")
	fs.StringVar(&c.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election Lease; empty: the pod's own namespace in a cluster, else default")
	fs.StringVar(&c.LeaderElectionID, "leader-election-id", "", "name of the leader election Lease; empty: arbiter-<scheduler name>")
	fs.StringVar(&c.LeaderElectionIdentity, "leader-election-identity", "", "this replica's name in the Lease and in its events; empty: <hostname>_<random>")
	fs.DurationVar(&c.LeaseDuration, "leader-elect-lease-duration", DefaultLeaseDuration, "how long standbys wait after the leader's last renewal before taking over")
	fs.DurationVar(&c.LeaseRenewDeadline, "leader-elect-renew-deadline", DefaultRenewDeadline, "the leader stops acting when it has not renewed for this long; shorter than the lease duration")
	fs.DurationVar(&c.LeaseRetryPeriod, "leader-elect-retry-period", DefaultRetryPeriod, "how often replicas try to acquire or renew the lease")
	fs.DurationVar(&c.RecordInterval, "record-interval", DefaultRecordInterval, "the least time between two writes of workload records: what changes meanwhile is written together")
	fs.StringVar(&c.ReservedNamespaces, "reserved-namespaces", strings.Join(store.SystemNamespaces, ","), "comma-separated namespaces no project may claim; Arbiter's own namespace is reserved besides")
	fs.IntVar(&c.MaxProjectNamespaces, "max-project-namespaces", store.DefaultMaxNamespacesPerProject, "how many namespaces one project may own")
	fs.IntVar(&c.DryRunsPerReplica, "dry-runs-per-replica", web.DefaultDryRunsPerReplica, "how many dry runs this replica runs at once; past it a dry run is refused with 429")
	fs.IntVar(&c.DryRunsPerCaller, "dry-runs-per-caller", web.DefaultDryRunsPerCaller, "how many dry runs one caller (person or API key) runs at once in a replica; past it 429")
	fs.IntVar(&c.AuditRetentionDays, "audit-retention-days", int(store.DefaultAuditRetention/(24*time.Hour)), "days the audit log keeps a row at least; the leader drops each month's rows whole once the month is older")
	fs.DurationVar(&c.UsageInterval, "usage-interval", DefaultUsageInterval, "how often the leader records every node pool's GPUs per project into the usage history; divides an hour (e.g. 30s, 1m)")
	fs.DurationVar(&c.UsageRawRetention, "usage-raw-retention", store.DefaultUsageRetention.Raw, "how long the usage history keeps its raw samples (each interval); older ones live on in hourly rows")
	fs.DurationVar(&c.UsageHourlyRetention, "usage-hourly-retention", store.DefaultUsageRetention.Hourly, "how long the usage history keeps its hourly rows; older ones live on in daily rows")
	fs.DurationVar(&c.UsageDailyRetention, "usage-daily-retention", store.DefaultUsageRetention.Daily, "how long the usage history keeps its daily rows; 0 keeps them forever")
	fs.StringVar(&c.ClusterID, "cluster-id", "", "the id Run:ai-shaped answers give this installation's one cluster, and requests must name (a UUID; keep a Run:ai cluster's id to keep its scripts); empty keeps the id it has")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", "text", "text or json")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || envErr != nil {
			return
		}
		if v, ok := os.LookupEnv(EnvName(f.Name)); ok {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("%s=%q: %w", EnvName(f.Name), v, err)
			}
		}
	})
	if envErr != nil {
		return c, envErr
	}
	if _, err := web.ParseTrustedProxies(c.TrustedProxies); err != nil {
		return c, fmt.Errorf("--trusted-proxies: %w", err)
	}
	if c.MaxProjectNamespaces < 1 {
		return c, fmt.Errorf("--max-project-namespaces %d: use a whole number of at least 1", c.MaxProjectNamespaces)
	}
	if c.DryRunsPerReplica < 1 {
		return c, fmt.Errorf("--dry-runs-per-replica %d: use a whole number of at least 1", c.DryRunsPerReplica)
	}
	if c.DryRunsPerCaller < 1 {
		return c, fmt.Errorf("--dry-runs-per-caller %d: use a whole number of at least 1", c.DryRunsPerCaller)
	}
	if c.AuditRetentionDays < 1 {
		return c, fmt.Errorf("--audit-retention-days %d: use a whole number of days, at least 1", c.AuditRetentionDays)
	}
	if err := validUsageInterval(c.UsageInterval); err != nil {
		return c, err
	}
	if c.UsageRawRetention < time.Hour || c.UsageHourlyRetention < 24*time.Hour || c.UsageDailyRetention < 0 {
		return c, fmt.Errorf("--usage-raw-retention %s, --usage-hourly-retention %s, --usage-daily-retention %s: keep raw samples at least 1h and hourly rows at least 24h (they wait there to be rolled up); a daily retention of 0 keeps daily rows forever",
			c.UsageRawRetention, c.UsageHourlyRetention, c.UsageDailyRetention)
	}
	if c.ClusterID != "" {
		if _, err := uuid.Parse(c.ClusterID); err != nil {
			return c, fmt.Errorf("--cluster-id %q: use a UUID, such as a Run:ai cluster's id", c.ClusterID)
		}
	}
	for _, ns := range splitList(c.ReservedNamespaces) {
		if err := store.ValidNamespace(ns); err != nil {
			return c, fmt.Errorf("--reserved-namespaces: %w", err)
		}
	}
	if c.Kubeconfig == "" {
		c.Kubeconfig = os.Getenv("KUBECONFIG")
	}
	if !set["leader-elect"] && os.Getenv(EnvName("leader-elect")) == "" && InCluster() {
		c.LeaderElect = true
	}
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return c, err
	}
	c.DataDir = abs
	return c, nil
}

// NamespaceRules are the rules of the namespaces projects may claim: the reserved list, and
// Arbiter's own namespace (the pod's, else the leader election Lease's).
func (c Config) NamespaceRules() store.NamespaceRules {
	return store.NamespaceRules{Reserved: splitList(c.ReservedNamespaces), Own: ownNamespace(c), MaxPerProject: c.MaxProjectNamespaces}
}

// dryRunLimits bounds the replica's dry runs as configured; a bound left at 0 (a Config
// built in code) is the default.
func (c Config) dryRunLimits() *web.DryRunLimits {
	return web.NewDryRunLimits(cmp.Or(c.DryRunsPerReplica, web.DefaultDryRunsPerReplica), cmp.Or(c.DryRunsPerCaller, web.DefaultDryRunsPerCaller))
}

// AuditRetention is how long the audit log keeps a row at least.
func (c Config) AuditRetention() time.Duration {
	if c.AuditRetentionDays == 0 { // a Config built in code: the default
		return store.DefaultAuditRetention
	}
	return time.Duration(c.AuditRetentionDays) * 24 * time.Hour
}

// usageRetention is how long each level of the usage history is kept; a Config built in code
// (all zero) keeps the defaults.
func (c Config) usageRetention() store.UsageRetention {
	if c.UsageRawRetention == 0 && c.UsageHourlyRetention == 0 && c.UsageDailyRetention == 0 {
		return store.DefaultUsageRetention
	}
	return store.UsageRetention{Raw: c.UsageRawRetention, Hourly: c.UsageHourlyRetention, Daily: c.UsageDailyRetention}
}

// EnvName is the environment twin of a flag: data-dir → ARBITER_DATA_DIR.
func EnvName(flagName string) string {
	return "ARBITER_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// InCluster reports whether the process runs in a Kubernetes pod.
func InCluster() bool {
	return os.Getenv("KUBERNETES_SERVICE_HOST") != "" && os.Getenv("KUBERNETES_SERVICE_PORT") != ""
}

// NewLogger builds the process logger from the config.
func NewLogger(c Config, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", c.LogLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch c.LogFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", c.LogFormat)
}
