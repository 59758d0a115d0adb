package deploy

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"golang.org/x/mod/modfile"
	corev1 "k8s.io/api/core/v1"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/server"
)

var repoRoot = filepath.Join("..", "..")

// loadCompose loads and validates docker-compose.yml with the Compose specification's
// loader (schema, interpolation, consistency), with an empty environment so that the file's
// own defaults apply.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := loader.LoadWithContext(ctx, types.ConfigDetails{
		WorkingDir:  root,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(root, "docker-compose.yml")}},
		Environment: types.Mapping{},
	})
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return p
}

// TestComposeFile: PostgreSQL from its official image with a volume and a health check, and
// Arbiter built from the Dockerfile, started once the database is healthy, on port 8080,
// with the kubeconfig mounted and the database given by URL; every flag and ARBITER_*
// variable it passes is one `arbiter serve` accepts.
func TestComposeFile(t *testing.T) {
	p := loadCompose(t)
	pg, ok := p.Services["postgres"]
	if !ok {
		t.Fatalf("no postgres service; services: %v", p.ServiceNames())
	}
	if name, _, _ := strings.Cut(pg.Image, ":"); name != "postgres" {
		t.Errorf("postgres runs image %q, want the official postgres image", pg.Image)
	}
	if pg.HealthCheck == nil || pg.HealthCheck.Disable || len(pg.HealthCheck.Test) == 0 {
		t.Errorf("postgres has no health check: %+v", pg.HealthCheck)
	}
	var dataVolume string
	for _, v := range pg.Volumes {
		if v.Type == types.VolumeTypeVolume && v.Target == "/var/lib/postgresql/data" {
			dataVolume = v.Source
		}
	}
	if _, declared := p.Volumes[dataVolume]; dataVolume == "" || !declared {
		t.Errorf("postgres keeps its data in no named volume: %+v (declared %v)", pg.Volumes, p.Volumes)
	}

	a, ok := p.Services["arbiter"]
	if !ok {
		t.Fatalf("no arbiter service; services: %v", p.ServiceNames())
	}
	if a.Build == nil {
		t.Fatal("arbiter is not built from the Dockerfile")
	}
	if _, err := os.Stat(filepath.Join(a.Build.Context, a.Build.Dockerfile)); err != nil {
		t.Errorf("arbiter's build: %v", err)
	}
	if dep, ok := a.DependsOn["postgres"]; !ok || dep.Condition != types.ServiceConditionHealthy {
		t.Errorf("arbiter depends on postgres with %+v, want condition service_healthy", a.DependsOn)
	}
	if len(a.Ports) != 1 || a.Ports[0].Target != 8080 || a.Ports[0].Published != "8080" {
		t.Errorf("arbiter's ports %+v, want 8080:8080", a.Ports)
	}

	if len(a.Command) == 0 || a.Command[0] != "serve" {
		t.Fatalf("arbiter's command %q does not run serve", a.Command)
	}
	var env []corev1.EnvVar
	for name, value := range a.Environment {
		if value == nil {
			t.Errorf("%s has no value", name)
			continue
		}
		env = append(env, corev1.EnvVar{Name: name, Value: *value})
	}
	cfg := parseServe(t, "docker-compose.yml", a.Command[1:], env)
	if !strings.HasSuffix(cfg.Addr, ":8080") {
		t.Errorf("arbiter listens on %q, not the published port 8080", cfg.Addr)
	}
	db, err := url.Parse(cfg.DatabaseURL)
	if err != nil || cfg.DatabaseURL == "" {
		t.Fatalf("database URL %q: %v; want the postgres service by URL, not a private PostgreSQL", cfg.DatabaseURL, err)
	}
	if db.Hostname() != "postgres" || db.Port() != "5432" || db.User.Username() != pg.Environment.ToMapping()["POSTGRES_USER"] ||
		strings.TrimPrefix(db.Path, "/") != pg.Environment.ToMapping()["POSTGRES_DB"] {
		t.Errorf("database URL %q does not reach the postgres service's database", cfg.DatabaseURL)
	}
	if pw, _ := db.User.Password(); pw != pg.Environment.ToMapping()["POSTGRES_PASSWORD"] {
		t.Errorf("database URL's password is not the postgres service's")
	}
	mounted := false
	for _, v := range a.Volumes {
		mounted = mounted || (v.Type == types.VolumeTypeBind && v.Target == cfg.Kubeconfig && v.ReadOnly)
	}
	if cfg.Kubeconfig == "" || !mounted {
		t.Errorf("kubeconfig %q is not a read-only bind mount: %+v", cfg.Kubeconfig, a.Volumes)
	}
}

// TestComposeConfigurationRuns: the configuration docker-compose.yml gives Arbiter — its
// command, and its environment with the database URL — started for real against a
// PostgreSQL given by URL (the test server's, standing in for the postgres service), with no
// private PostgreSQL. /readyz answers once the database does.
func TestComposeConfigurationRuns(t *testing.T) {
	a := loadCompose(t).Services["arbiter"]
	for name, value := range a.Environment {
		if value != nil {
			t.Setenv(name, *value)
		}
	}
	t.Setenv(server.EnvName("database-url"), testdb.NewURL(t))
	cfg := parseServe(t, "docker-compose.yml", a.Command[1:], nil)
	// The listener and the cluster are the container's: here a free local port and none.
	dataDir := t.TempDir()
	cfg.Addr, cfg.Kubeconfig, cfg.DataDir = "127.0.0.1:0", server.NoCluster, dataDir
	base := serve(t, cfg)
	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	_ = json.NewDecoder(res.Body).Decode(&body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("/readyz = %d %v, want 200", res.StatusCode, body)
	}
	if entries, _ := os.ReadDir(dataDir); len(entries) != 0 {
		t.Errorf("arbiter wrote %d entries in its data dir; with a database URL it needs none (a read-only container)", len(entries))
	}
}

// TestDockerfile: a multi-stage build of a static binary (CGO_ENABLED=0) with go.mod's Go, a
// runtime stage that runs as a non-root user, and a default command `arbiter serve` accepts.
func TestDockerfile(t *testing.T) {
	f, err := os.Open(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type instruction struct{ cmd, args string }
	var preamble []instruction // before the first FROM: global ARGs
	var stages [][]instruction
	sc := bufio.NewScanner(f)
	var line string
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, "#") || (text == "" && line == "") {
			continue
		}
		if cont, ok := strings.CutSuffix(text, "\\"); ok {
			line += cont + " "
			continue
		}
		line += text
		cmd, args, _ := strings.Cut(line, " ")
		line = ""
		cmd = strings.ToUpper(cmd)
		if cmd == "FROM" {
			stages = append(stages, nil)
		}
		in := instruction{cmd, strings.TrimSpace(args)}
		if len(stages) > 0 {
			stages[len(stages)-1] = append(stages[len(stages)-1], in)
		} else {
			preamble = append(preamble, in)
		}
	}
	var goVersion string
	for _, in := range preamble {
		if name, value, ok := strings.Cut(in.args, "="); in.cmd == "ARG" && ok && name == "GO_VERSION" {
			goVersion = value
		}
	}
	data, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if mod.Go == nil || goVersion != mod.Go.Version {
		t.Errorf("the Dockerfile builds with Go %q, go.mod says %v", goVersion, mod.Go)
	}
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a build stage and a runtime stage", len(stages))
	}
	static := false
	for _, in := range stages[0] {
		static = static || (in.cmd == "RUN" && strings.Contains(in.args, "CGO_ENABLED=0") && strings.Contains(in.args, "go build"))
	}
	if !static {
		t.Error("the build stage does not build with CGO_ENABLED=0")
	}
	runtime := stages[len(stages)-1]
	var user string
	var entrypoint, cmd []string
	for _, in := range runtime {
		switch in.cmd {
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(in.args), &entrypoint); err != nil {
				t.Errorf("ENTRYPOINT %s is not the exec form: %v", in.args, err)
			}
		case "CMD":
			if err := json.Unmarshal([]byte(in.args), &cmd); err != nil {
				t.Errorf("CMD %s is not the exec form: %v", in.args, err)
			}
		}
	}
	if uid, _, _ := strings.Cut(user, ":"); uid == "" || uid == "0" || uid == "root" {
		t.Errorf("the runtime stage runs as %q, want a non-root user", user)
	}
	if len(entrypoint) != 1 || len(cmd) == 0 || cmd[0] != "serve" {
		t.Fatalf("ENTRYPOINT %q CMD %q, want the binary and serve", entrypoint, cmd)
	}
	parseServe(t, "the Dockerfile", cmd[1:], nil)
}
