package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/test/conformance/internal/extract"
)

// extractPath is the committed extract.
const extractPath = "testdata/runai-extract.json"

// sourceFromHere is extract.SourcePath seen from this package's directory.
const sourceFromHere = "../../" + extract.SourcePath

// TestExtractIsCurrent: the committed extract is what the generator makes from Run:ai's
// document and today's routes (run go generate in this directory when it is not). Without the
// document beside the repository (a fresh clone), the extract is checked against today's
// routes only: every pair it holds is still one Arbiter serves.
func TestExtractIsCurrent(t *testing.T) {
	t.Parallel()
	committed, err := os.ReadFile(extractPath)
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile(sourceFromHere)
	if errors.Is(err, fs.ErrNotExist) {
		t.Logf("%s is not here: checking the extract against today's routes only", sourceFromHere)
		var doc map[string]any
		if err := json.Unmarshal(committed, &doc); err != nil {
			t.Fatal(err)
		}
		var held []string
		for path, item := range doc["paths"].(map[string]any) {
			for method := range item.(map[string]any) {
				if method != "parameters" {
					held = append(held, strings.ToUpper(method)+" "+path)
				}
			}
		}
		slices.Sort(held)
		if diff := cmp.Diff(held, extract.Shared(doc, extract.ServedRoutes())); diff != "" {
			t.Errorf("the extract holds pairs Arbiter no longer serves (-held +served):\n%s", diff)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := extract.Build(source, extract.ServedRoutes())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Errorf("%s is not what the generator makes from %s and today's routes: run go generate ./test/conformance", extractPath, sourceFromHere)
	}
}
