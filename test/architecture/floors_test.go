// Package architecture checks the floors of docs/architecture.md "Floors": which packages may
// import which, so that the core stays below what talks to the world, what ships stays apart
// from the development harness and the test support, and a newcomer can trust the folders.
package architecture

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/arbiterhq/arbiter/"

// floors are the packages of what ships, lowest first. A package imports packages of its own
// floor or below, never above.
var floors = [][]string{
	// 0, language: pieces every floor may use, importing nothing of the project
	{"internal/apiversion", "internal/english", "internal/listquery", "internal/prefetch", "internal/routenames",
		"internal/metrics/exposition", "static", "migrations"},
	// 1, the decision core: pure (its own purity test says what else it may not import)
	{"scheduler", "scheduler/lifecycle", "scheduler/fairness"},
	// 2, the domain: workload kinds and the Kubernetes objects they are made of
	{"workload/objects", "workload/native"},
	// 3, the edges: PostgreSQL, identities, pages' markup, metrics, the cluster
	{"store", "auth", "views", "internal/metrics", "scheduler/kube"},
	// 4, the application: what a caller may see and do with workloads, between HTTP and the edges
	{"workloads"},
	// 5, HTTP: the console and the API
	{"web"},
	// 6, composition: configuration, wiring, the loops
	{"server"},
	// 7, the binary
	{"cmd/arbiter"},
}

// Beside the floors: the development harness may use the floors up to the edges and is reached
// only from the composition's one seam and from the binary; test support may use anything and
// is reached only from tests.
const (
	devHarness  = "internal/dev/"
	testSupport = "internal/testkit/"
	devTop      = 3
	devSeam     = "server/dev_harness.go"
)

// The command line, beside the floors, is a client of the REST API like any other: it talks to
// the server over HTTP only, so it imports the language floor and nothing else of the project
// (not the store, the scheduler or the handlers), and only the binary imports it.
const (
	commandLine    = "cli"
	commandLineTop = 0
)

// testOnly are packages that hold tests and benchmarks only, and the benchmarks' report
// (internal/benchreport, run by hack/benchreport from make bench): nothing that ships.
var testOnly = []string{"test/", "bench", "internal/benchreport", "hack/"}

type goPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

func listPackages(t *testing.T) []goPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		for i := range p.Imports {
			p.Imports[i] = strings.TrimPrefix(p.Imports[i], module)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func floorOf(pkg string) int {
	for i, f := range floors {
		if slices.Contains(f, pkg) {
			return i
		}
	}
	return -1
}

func isTestOnly(pkg string) bool {
	return slices.ContainsFunc(testOnly, func(prefix string) bool { return strings.HasPrefix(pkg, prefix) })
}

// violations are the imports of non-test files that break the floors.
func violations(pkgs []goPackage, importsOfFile func(dir, file string) []string) []string {
	var bad []string
	for _, p := range pkgs {
		from := p.ImportPath
		if isTestOnly(from) {
			continue
		}
		for _, to := range p.Imports {
			if to == commandLine && from != "cmd/arbiter" && !strings.HasPrefix(from, testSupport) {
				bad = append(bad, from+" imports "+to+": the command line is reached from cmd/arbiter only")
				continue
			}
			if from == commandLine && (floorOf(to) > commandLineTop || strings.HasPrefix(to, devHarness) || strings.HasPrefix(to, testSupport)) {
				bad = append(bad, from+" imports "+to+": the command line talks to the server over HTTP only and imports floor 0 alone")
				continue
			}
			if floorOf(to) < 0 && !strings.HasPrefix(to, devHarness) && !strings.HasPrefix(to, testSupport) {
				continue // not the project's
			}
			switch {
			case strings.HasPrefix(to, testSupport):
				if !strings.HasPrefix(from, testSupport) {
					bad = append(bad, from+" imports "+to+": test support is for tests only")
				}
			case strings.HasPrefix(to, devHarness):
				switch {
				case strings.HasPrefix(from, devHarness), strings.HasPrefix(from, testSupport), from == "cmd/arbiter":
				case from == "server":
					for _, f := range p.GoFiles {
						if filepath.Join("server", f) != devSeam && slices.Contains(importsOfFile(p.Dir, f), to) {
							bad = append(bad, "server/"+f+" imports "+to+": server reaches the development harness through "+devSeam+" only")
						}
					}
				default:
					bad = append(bad, from+" imports "+to+": the development harness is reached from "+devSeam+" and cmd/arbiter only")
				}
			case strings.HasPrefix(from, devHarness):
				if floorOf(to) > devTop {
					bad = append(bad, from+" imports "+to+": the development harness uses floors up to "+strconv.Itoa(devTop)+" only")
				}
			case strings.HasPrefix(from, testSupport), from == commandLine:
			case floorOf(from) < 0:
				bad = append(bad, from+" is on no floor: add it to floors (test/architecture) and docs/architecture.md")
			case floorOf(to) > floorOf(from):
				bad = append(bad, from+" (floor "+strconv.Itoa(floorOf(from))+") imports "+to+" (floor "+strconv.Itoa(floorOf(to))+"), a floor above")
			}
		}
	}
	return bad
}

func fileImports(dir, file string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, file), nil, parser.ImportsOnly)
	if err != nil {
		return nil
	}
	var paths []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		paths = append(paths, strings.TrimPrefix(p, module))
	}
	return paths
}

func TestFloors_NoImportRunsUpAFloor(t *testing.T) {
	pkgs := listPackages(t)
	for _, p := range pkgs {
		if !isTestOnly(p.ImportPath) && floorOf(p.ImportPath) < 0 && p.ImportPath != commandLine &&
			!strings.HasPrefix(p.ImportPath, devHarness) && !strings.HasPrefix(p.ImportPath, testSupport) {
			t.Errorf("package %s is on no floor: add it to floors (test/architecture) and docs/architecture.md", p.ImportPath)
		}
	}
	for _, v := range violations(pkgs, fileImports) {
		t.Error(v)
	}
}

// The check itself must be able to fail: each kind of violation, made up.
func TestFloors_TheCheckFindsEachKindOfViolation(t *testing.T) {
	pkgs := []goPackage{
		{ImportPath: "views", Imports: []string{"web", "internal/english"}},
		{ImportPath: "workloads", Imports: []string{"store", "web"}},
		{ImportPath: "scheduler", Imports: []string{"store"}},
		{ImportPath: "store", Imports: []string{"internal/testkit/testdb"}},
		{ImportPath: "web", Imports: []string{"internal/dev/demo"}},
		{ImportPath: "server", GoFiles: []string{"serve.go", "dev_harness.go"}, Imports: []string{"internal/dev/pglocal"}},
		{ImportPath: "internal/dev/demo", Imports: []string{"web"}},
		{ImportPath: "test/e2e", Imports: []string{"internal/testkit/testdb", "server"}},
		{ImportPath: "cmd/arbiter", Imports: []string{"internal/dev/devcluster", "server", "cli"}},
		{ImportPath: "cli", Imports: []string{"internal/apiversion", "store", "web"}},
		{ImportPath: "web", Imports: []string{"cli"}},
	}
	files := func(dir, file string) []string {
		if file == "serve.go" || file == "dev_harness.go" {
			return []string{"internal/dev/pglocal"}
		}
		return nil
	}
	got := violations(pkgs, files)
	want := []string{
		"views (floor 3) imports web (floor 5), a floor above",
		"workloads (floor 4) imports web (floor 5), a floor above",
		"scheduler (floor 1) imports store (floor 3), a floor above",
		"store imports internal/testkit/testdb: test support is for tests only",
		"web imports internal/dev/demo: the development harness is reached from server/dev_harness.go and cmd/arbiter only",
		"server/serve.go imports internal/dev/pglocal: server reaches the development harness through server/dev_harness.go only",
		"internal/dev/demo imports web: the development harness uses floors up to 3 only",
		"cli imports store: the command line talks to the server over HTTP only and imports floor 0 alone",
		"cli imports web: the command line talks to the server over HTTP only and imports floor 0 alone",
		"web imports cli: the command line is reached from cmd/arbiter only",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
