// Command generate writes the conformance test's extract of Run:ai's OpenAPI document
// (package extract) from the document beside the repository. Run from test/conformance by
// go generate.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/arbiterhq/arbiter/test/conformance/internal/extract"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: generate <runai-openapi.json> <extract.json>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func run(source, target string) error {
	doc, err := os.ReadFile(source)
	if err != nil {
		return fmt.Errorf("%w (the document is in the directory that holds the repository, under shared/reference)", err)
	}
	out, err := extract.Build(doc, extract.ServedRoutes())
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	return os.WriteFile(target, out, 0o644)
}
