package web_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/arbiterhq/arbiter/views"
)

// schedulerReasons are the waiting reasons the scheduler declares (constants of its type
// Reason), read from its source, so that a reason added there is checked here without a list
// to keep by hand.
func schedulerReasons(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "scheduler", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				v := spec.(*ast.ValueSpec)
				if typ, ok := v.Type.(*ast.Ident); !ok || typ.Name != "Reason" {
					continue
				}
				for _, value := range v.Values {
					if lit, ok := value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						reasons = append(reasons, s)
					}
				}
			}
		}
	}
	if len(reasons) < 9 {
		t.Fatalf("read %d reasons from the scheduler's source (%v); S23 lists at least 9", len(reasons), reasons)
	}
	slices.Sort(reasons)
	return reasons
}

// TestEveryWaitingReasonIsWordedAndFilterable: every reason the scheduler may give a waiting
// workload (S23, and S29's TopologyUnsatisfiable) is said in words on the Overview, not as its
// bare code, and is a choice of the Workloads view's Reason filter.
func TestEveryWaitingReasonIsWordedAndFilterable(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, nil)
	doc := pageAs(t, f.srv, tokenOf(f.srv), "/workloads", nil, false, 200)
	var choices []string
	for _, o := range findAll(selectIn(doc, "reason"), func(n *html.Node) bool { return n.Data == "option" }) {
		choices = append(choices, attr(o, "value"))
	}
	for _, r := range schedulerReasons(t) {
		if words := views.ReasonText(r); words == r || words == "" {
			t.Errorf("the Overview says reason %s as %q, not in words", r, words)
		}
		if !slices.Contains(choices, r) {
			t.Errorf("the Workloads view's Reason filter does not offer %s (it offers %v)", r, choices)
		}
	}
}
