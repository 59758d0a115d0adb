package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/metrics"
	"github.com/arbiterhq/arbiter/migrations"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Database opens the configured database: the given URL, or a private PostgreSQL started in
// the data dir. The returned stop function closes what was opened.
func Database(ctx context.Context, c Config, log *slog.Logger) (url string, stop func(), err error) {
	if c.DatabaseURL != "" {
		return c.DatabaseURL, func() {}, nil
	}
	return startPrivateDatabase(ctx, filepath.Join(c.DataDir, "postgres"), log)
}

// processStarted is about when the process started (package variables are set before main):
// start-up's log lines say how long after it they came, the figures of docs/performance.md
// "Start-up and failover".
var processStarted = time.Now()

// Serve runs the console, the API and, given a cluster, the scheduler until ctx is cancelled, then
// shuts everything down in order. ready, if not nil, receives the URL once serving.
func Serve(ctx context.Context, c Config, log *slog.Logger, out io.Writer, ready chan<- string) error {
	// Until the first bind, the garbage collector waits (start_collector.go).
	collector := holdCollectorForStart(log)
	defer collector.release("the start ended")
	// The cluster first: the scheduler's first lists (kube.Listing) come in while the database
	// is opened, which its first cycle waits for as well.
	k8s, err := connectCluster(ctx, c, log, out)
	if err != nil {
		return err
	}
	defer k8s.stop()
	var listing *kube.Listing
	if k8s.config != nil {
		if listing, err = kube.NewListing(k8s.config); err != nil {
			return err
		}
		listCtx, stopListing := context.WithCancel(ctx) // a start that fails later stops it too
		defer stopListing()
		listing.Start(listCtx)
	}
	dbURL, stopDB, err := Database(ctx, c, log)
	if err != nil {
		return err
	}
	defer stopDB()
	if err := migrations.Up(dbURL); err != nil {
		return err
	}
	pool, err := openPool(ctx, dbURL, c.DatabaseTimeout)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.NewWithTimeout(pool, c.DatabaseTimeout)
	st.SetNamespaceRules(c.NamespaceRules())
	clusterID, err := installationClusterID(ctx, c, st)
	if err != nil {
		return err
	}
	m := metrics.New()
	// A workload record or event the database refuses even bounded is skipped, never failing
	// the batch of the others; it is told here once.
	st.OnRecordSkipped(func(what, uid string, err error) {
		log.Error("workload "+what+" refused by the database; skipped", "workload", uid, "err", err)
		m.RowSkipped(what)
	})
	if err := m.Register(metrics.DBPool(pool)); err != nil {
		return err
	}
	// Listen before anything loads the configuration, so that no change made in between is
	// missed. Should the database be slow to answer, go on: once the listener is in place it
	// reloads everything anyway.
	select {
	case <-st.FollowConfigChanges(ctx, store.ListenOptions{Log: log}):
	case <-time.After(10 * time.Second):
		log.Warn("configuration notifications are not in place yet; going on without waiting")
	case <-ctx.Done():
		return ctx.Err()
	}

	log.Info("database ready", "since_start", time.Since(processStarted).Round(time.Millisecond))
	kubeConfig := k8s.config
	if c.Demo {
		seedDemo(ctx, st, log)
	}
	var sched *kube.Scheduler
	var run *schedulerRun
	schedCtx, stopSched := context.WithCancel(ctx)
	schedDone := make(<-chan struct{})
	var schedErr error
	// Only the leader keeps the audit log's partitions (docs/operations.md "Audit log retention").
	keepAudit := func(ctx context.Context) { keepAuditLog(ctx, st, c.AuditRetention(), log) }
	if kubeConfig != nil {
		if run, err = startScheduler(schedCtx, c, kubeConfig, listing, st, log, m, nil, keepAudit, &schedErr); err != nil {
			stopSched()
			return err
		}
		sched, schedDone = run.sched, run.done
		defer func() { stopSched(); <-schedDone }()
		if c.Demo {
			defer startDemo(schedCtx, kubeConfig, c.SchedulerName, c.DemoSeed, log)()
		}
	} else {
		defer stopSched()
		go keepAudit(schedCtx) // no cluster, no election: this process is the only one
	}

	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.Addr, err)
	}
	url := "http://" + displayAddr(ln.Addr().String())
	login, howToLogin, saveAdmin, err := loginConfig(ctx, c, st, url, log)
	if err != nil {
		ln.Close()
		return err
	}
	// One wait for the first bind: the collector's pacing comes back, then the admin's password
	// (argon2id, 64 MiB) is stored.
	afterFirstBind := func(ctx context.Context) {
		firstBind(run)(ctx)
		collector.release("the first bind was answered, or no first bind is to come")
	}
	if saveAdmin != nil {
		go bootstrapAdmin(ctx, afterFirstBind, saveAdmin, login.AdminReady, log)
	} else {
		go afterFirstBind(ctx)
	}
	sessions := st.Sessions(5 * time.Minute)
	defer sessions.StopCleanup()
	login.Sessions = sessions

	handler := web.New(web.Deps{
		Properties:  st,
		Audit:       st,
		Ready:       st.Ping,
		Log:         log,
		PriorityCls: priorityClassStatus(sched),
		Users:       st,
		Login:       login,

		Organization:   st,
		OrgStatus:      orgStatusSource(sched),
		Workloads:      st,
		Labeler:        workloadLabeler(sched),
		Cycles:         lastCycle(sched),
		Pods:           workloadPods(sched),
		Standings:      preemptibilityStandings(sched),
		Foresee:        foresight(run),
		DryRuns:        c.dryRunLimits(),
		Estimating:     run != nil,
		Metrics:        metricsOnMainPort(c, m),
		Requests:       m,
		Refusals:       m,
		Cluster:        clusterStatus(run),
		Submitter:      workloadSubmitter(sched),
		Submissions:    st,
		ClusterID:      clusterID,
		Usage:          st,
		UsageRetention: c.usageRetention(),
	})
	// Refusals folded into their kind's next audit row are written a minute on, and once the
	// HTTP server has shut down (this defer runs after Shutdown), before the pool closes.
	flushCtx, stopFlush := context.WithCancel(context.WithoutCancel(ctx))
	flushed := make(chan struct{})
	go func() { defer close(flushed); handler.RunRefusalFlush(flushCtx) }()
	defer func() { stopFlush(); <-flushed }()
	srv := httpServer(handler, c)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if c.MetricsAddr != "" {
		stopMetrics, err := serveMetrics(c, m, log, errc)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}

	log.Info("Arbiter is serving", "url", url, "since_start", time.Since(processStarted).Round(time.Millisecond))
	fmt.Fprintf(out, "\n  Arbiter is running at %s\n  %s\n\n", url, howToLogin)
	if ready != nil {
		ready <- url
	}

	select {
	case <-ctx.Done():
	case err := <-k8s.failed:
		log.Error("the local control plane failed", "err", err)
		return err
	case <-schedDone:
		log.Error("the scheduler stopped", "err", schedErr)
		return fmt.Errorf("scheduler: %w", schedErr)
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// openPool opens the pool with connection attempts bounded by the database timeout; every
// call the store makes is bounded by it too (store.NewWithTimeout).
func openPool(ctx context.Context, dbURL string, timeout time.Duration) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	if timeout <= 0 {
		timeout = store.DefaultTimeout
	}
	if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > timeout {
		cfg.ConnConfig.ConnectTimeout = timeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	return pool, nil
}

// The HTTP server's timeouts (docs/operations.md): a client that trickles its request or
// never reads its answer does not hold a connection for long. Answers are rendered whole
// before they are written, so the write timeout only needs to cover a slow reader of at most
// a few megabytes. The one exception is the Workloads CSV, which is streamed and extends its
// own write deadline to a bounded 5 minutes (web/workloads_csv.go).
const (
	DefaultHTTPReadTimeout  = 30 * time.Second
	DefaultHTTPWriteTimeout = 60 * time.Second
	DefaultHTTPIdleTimeout  = 2 * time.Minute
	httpReadHeaderTimeout   = 10 * time.Second
)

func httpServer(h http.Handler, c Config) *http.Server {
	or := func(d, def time.Duration) time.Duration {
		if d > 0 {
			return d
		}
		return def
	}
	read := or(c.HTTPReadTimeout, DefaultHTTPReadTimeout)
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(httpReadHeaderTimeout, read),
		ReadTimeout:       read,
		WriteTimeout:      or(c.HTTPWriteTimeout, DefaultHTTPWriteTimeout),
		IdleTimeout:       or(c.HTTPIdleTimeout, DefaultHTTPIdleTimeout),
	}
}

// displayAddr makes a listen address clickable: 0.0.0.0 and [::] become 127.0.0.1.
func displayAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// priorityClassStatus reports PriorityClass sync from the scheduler, or Unknown without one.
func priorityClassStatus(s *kube.Scheduler) web.PriorityClassStatus {
	if s == nil {
		return nil
	}
	return s
}

// workloadLabeler labels workloads through the scheduler, or is nil (not a typed nil) without
// a cluster, so the API answers 503.
func workloadLabeler(s *kube.Scheduler) web.WorkloadLabeler {
	if s == nil {
		return nil
	}
	return s.Workloads()
}

// workloadSubmitter is the scheduler's workloads client as the submission API's cluster edge
// (nil: no cluster).
func workloadSubmitter(s *kube.Scheduler) web.WorkloadSubmitter {
	if s == nil {
		return nil
	}
	return s.Workloads()
}

// loginConfig sets up how people sign in: OIDC when an issuer is configured, else the local
// bootstrap admin (password from ARBITER_ADMIN_PASSWORD, or generated on first start and
// printed once). It returns the sentence that tells the operator how to sign in.
// loginConfig is how people sign in, the sentence that tells them, and, for the local admin
// account, what stores its password (nil: nothing to store; the caller runs it with
// bootstrapAdmin, which closes the config's AdminReady).
func loginConfig(ctx context.Context, c Config, st *store.Store, url string, log *slog.Logger) (web.LoginConfig, string, func(context.Context) error, error) {
	lc := web.LoginConfig{
		AdminSubjects: splitList(c.AdminSubjects), AdminGroups: splitList(c.AdminGroups),
		IdleTimeout: c.SessionIdle, Lifetime: c.SessionLifetime,
	}
	proxies, err := web.ParseTrustedProxies(c.TrustedProxies)
	if err != nil {
		return lc, "", nil, fmt.Errorf("--trusted-proxies: %w", err)
	}
	lc.TrustedProxies = proxies
	// One key for every replica, so a login form served by one can be posted to another.
	if lc.FormKey, err = st.ServerKey(ctx, "login-form"); err != nil {
		return lc, "", nil, fmt.Errorf("the login form's signing key: %w", err)
	}
	// Access tokens (/api/v2/token) too: one replica issues, any accepts.
	if lc.TokenKey, err = st.ServerKey(ctx, "access-token"); err != nil {
		return lc, "", nil, fmt.Errorf("the access tokens' signing key: %w", err)
	}
	if c.OIDCIssuer != "" {
		redirect := c.OIDCRedirectURL
		if redirect == "" {
			redirect = url + "/auth/oidc/callback"
		}
		if c.OIDCClientID == "" {
			return lc, "", nil, errors.New("--oidc-issuer needs --oidc-client-id (and usually ARBITER_OIDC_CLIENT_SECRET)")
		}
		o, err := auth.NewOIDC(ctx, auth.OIDCConfig{Issuer: c.OIDCIssuer, ClientID: c.OIDCClientID,
			ClientSecret: c.OIDCClientSecret, RedirectURL: redirect, GroupsClaim: c.OIDCGroupsClaim})
		if err != nil {
			return lc, "", nil, err
		}
		lc.OIDC = o
		how := "Sign in with your identity provider (" + c.OIDCIssuer + ")."
		if len(lc.AdminSubjects)+len(lc.AdminGroups) == 0 {
			how += " No --admin-subjects or --admin-groups are set: admins come from access rules only."
		}
		return lc, how, nil, nil
	}
	password := c.AdminPassword
	if password == "" {
		switch _, err := st.LocalUser(ctx, web.BootstrapAdmin); {
		case err == nil:
			return lc, fmt.Sprintf("Sign in as user %q with the password printed when Arbiter first started\n  (set ARBITER_ADMIN_PASSWORD to replace it).", web.BootstrapAdmin), nil, nil
		case !errors.Is(err, store.ErrNotFound):
			return lc, "", nil, fmt.Errorf("bootstrap admin: %w", err)
		}
	}
	how := fmt.Sprintf("Sign in as user %q with the password from ARBITER_ADMIN_PASSWORD.", web.BootstrapAdmin)
	generated := password == ""
	if generated {
		password = auth.GeneratePassword()
		how = fmt.Sprintf("Sign in as user %q with password %s\n  (generated now and shown only this once; set ARBITER_ADMIN_PASSWORD to choose your own)", web.BootstrapAdmin, password)
	}
	lc.AdminReady = make(chan struct{})
	save := func(ctx context.Context) error {
		created, err := st.EnsureLocalUser(ctx, web.BootstrapAdmin, "Administrator", !generated, func() (string, error) {
			return auth.HashPassword(password)
		})
		switch {
		case err != nil:
			return err
		case generated && created:
			log.Info("created the local admin account with a generated password (printed once on the console)")
		case generated:
			log.Warn("another replica created the local admin account first: sign in with the password it printed")
		}
		return nil
	}
	return lc, how, save, nil
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// installationClusterID sets the installation's cluster id when --cluster-id names one and
// answers the id the installation has. Replicas share it through the database; give them all
// the same --cluster-id, or none.
func installationClusterID(ctx context.Context, c Config, st *store.Store) (string, error) {
	if c.ClusterID != "" {
		if err := st.SetClusterID(ctx, uuid.MustParse(c.ClusterID), store.Actor{Subject: "arbiter serve --cluster-id", SubjectType: "system"}); err != nil {
			return "", fmt.Errorf("set the cluster id: %w", err)
		}
	}
	id, err := st.ClusterID(ctx)
	if err != nil {
		return "", fmt.Errorf("read the cluster id: %w", err)
	}
	return id.String(), nil
}
