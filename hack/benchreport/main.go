// Command benchreport writes make bench's report: it reads the saved standard output of the
// benchmark steps and writes report.md, report.html and a chart per comparison into the
// artifacts directory, and with -docs it also writes the latest run's tables into
// docs/performance.md between its bench markers.
//
//	go run ./hack/benchreport [-dir artifacts/bench] [-docs docs/performance.md] OUTPUT...
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/arbiterhq/arbiter/internal/benchreport"
)

func main() {
	dir := flag.String("dir", "artifacts/bench", "where the report goes, and where make bench left steps.tsv and the load averages")
	root := flag.String("root", ".", "the repository, for its pins and commit")
	docs := flag.String("docs", "", "also write the latest run's tables into this file between "+benchreport.DocsBegin+" and "+benchreport.DocsEnd)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: benchreport [flags] OUTPUT...\n\nOUTPUT is the saved standard output of go test -bench.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*dir, *root, *docs, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(dir, root, docs string, outputs []string) error {
	var figures benchreport.Figures
	var newest time.Time
	for _, path := range outputs {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		err = figures.Read(f, path)
		f.Close()
		if err != nil {
			return err
		}
		if st, err := os.Stat(path); err == nil && st.ModTime().After(newest) {
			newest = st.ModTime()
		}
	}
	// The run's date is when its last output was written, so that a report rewritten later
	// (make bench-docs) still dates the run.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := benchreport.ReadRun(ctx, dir, root, newest)
	if err != nil {
		return err
	}
	report := benchreport.Build(figures.List())
	if err := benchreport.Write(dir, run, report); err != nil {
		return err
	}
	fmt.Printf("benchmark report: %s and %s\n", filepath.Join(dir, "report.html"), filepath.Join(dir, "report.md"))
	if docs == "" {
		return nil
	}
	var md bytes.Buffer
	if err := benchreport.Markdown(&md, run, report, 3, ""); err != nil {
		return err
	}
	if err := benchreport.UpdateDocs(docs, md.Bytes()); err != nil {
		return err
	}
	fmt.Printf("the latest run's tables written into %s\n", docs)
	return nil
}
