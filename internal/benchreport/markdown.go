package benchreport

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// runLines describe the run, as label and text, for both the Markdown and the HTML.
func runLines(run Run) [][2]string {
	when := run.Date.UTC().Format("2006-01-02 15:04 UTC")
	lines := [][2]string{
		{"When", fmt.Sprintf("%s, Arbiter at commit %s", when, run.Commit)},
		{"Machine", fmt.Sprintf("%d × %s, %.1f GiB of memory", run.CPUs, run.CPU, run.MemoryGiB)},
	}
	if run.LoadStart != "" || run.LoadEnd != "" {
		lines = append(lines, [2]string{"Load average (1, 5, 15 min)", fmt.Sprintf("%s at the start, %s at the end", orUnknown(run.LoadStart), orUnknown(run.LoadEnd))})
	}
	lines = append(lines, [2]string{"Versions", fmt.Sprintf("Go %s, Kubernetes %s, kwok %s, Kueue %s", strings.TrimPrefix(run.Go, "go"), run.Kubernetes, run.Kwok, run.Kueue)})
	if len(run.Steps) > 0 || run.Total > 0 {
		var took []string
		for _, s := range run.Steps {
			d := "under 1 s" // the steps file counts whole seconds
			if s.Took >= time.Second {
				d = Duration(s.Took)
			}
			took = append(took, s.Name+" "+d)
		}
		text := strings.Join(took, ", ")
		if run.Total > 0 {
			if text != "" {
				text += "; "
			}
			text += "the whole run " + Duration(run.Total)
		}
		lines = append(lines, [2]string{"Took", text})
	}
	return lines
}

func orUnknown(s string) string {
	if s == "" {
		return "not recorded"
	}
	return s
}

// ratioNote says how to read the ratio columns.
const ratioNote = "Arbiter ÷ X is Arbiter's figure divided by X's in the same case: below 1, Arbiter's is the smaller (for a time, the faster). " +
	"Kueue + kube-scheduler is Kueue admitting and kube-scheduler binding, end to end on the same cluster; " +
	"Kueue's harness is Kueue's own scalability harness (a minimal Kueue admitting Workloads, no pods)."

// Markdown writes the run and the report's tables, its headings at level (2 for ##). With
// charts, a comparison's charts follow its table as images in chartsDir.
func Markdown(w io.Writer, run Run, r Report, level int, chartsDir string) error {
	h := func(n int) string { return strings.Repeat("#", level+n) + " " }
	var b bytes.Buffer
	fmt.Fprintf(&b, "%sThe run\n\n", h(0))
	for _, l := range runLines(run) {
		fmt.Fprintf(&b, "- **%s:** %s\n", l[0], l[1])
	}
	if len(r.Compared) > 0 {
		fmt.Fprintf(&b, "\n%sSide by side\n\n%s\n", h(0), ratioNote)
		for _, c := range r.Compared {
			t := comparisonTable(c)
			fmt.Fprintf(&b, "\n%s%s\n\n", h(1), t.Title)
			writeTable(&b, t)
			if t.Own != nil {
				fmt.Fprintf(&b, "\n%s:\n\n", t.Own.Title)
				writeTable(&b, *t.Own)
			}
			if chartsDir != "" {
				for _, ch := range t.Charts {
					fmt.Fprintf(&b, "\n![%s](%s/%s)\n", chartTitle(ch), chartsDir, ChartFile(ch))
				}
			}
		}
	}
	if len(r.Alone) > 0 {
		fmt.Fprintf(&b, "\n%sOne system alone\n\nBenchmarks whose figures name no system: Arbiter's scheduler core and API unless the benchmark says otherwise.\n", h(0))
		for _, t := range aloneTables(r.Alone) {
			fmt.Fprintf(&b, "\n%s%s\n\n", h(1), t.Title)
			writeTable(&b, t)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func writeTable(b *bytes.Buffer, t table) {
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	b.WriteString("|")
	for _, h := range t.Header {
		b.WriteString(" " + cell(h) + " |")
	}
	b.WriteString("\n|")
	for i := range t.Header {
		if t.numeric(i) {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" --- |")
		}
	}
	b.WriteString("\n")
	for _, row := range t.Rows {
		b.WriteString("|")
		for _, c := range row {
			b.WriteString(" " + cell(c) + " |")
		}
		b.WriteString("\n")
	}
}

// The markers between which UpdateDocs writes the latest run.
const (
	DocsBegin = "<!-- bench:begin -->"
	DocsEnd   = "<!-- bench:end -->"
)

// UpdateDocs replaces what lies between DocsBegin and DocsEnd in the file at path with
// content, leaving the rest of the file as it was.
func UpdateDocs(path string, content []byte) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	updated, err := replaceBetween(doc, content)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, updated, 0o644)
}

// replaceBetween replaces the lines between the marker lines; a marker counts only on a line
// of its own, so that prose may name the markers.
func replaceBetween(doc, content []byte) ([]byte, error) {
	lines := bytes.SplitAfter(doc, []byte("\n"))
	begin, end := -1, -1
	for i, l := range lines {
		switch string(bytes.TrimSpace(l)) {
		case DocsBegin:
			if begin >= 0 {
				return nil, fmt.Errorf("%s stands on more than one line: keep one pair of markers", DocsBegin)
			}
			begin = i
		case DocsEnd:
			if begin >= 0 && end < 0 {
				end = i
			}
		}
	}
	if begin < 0 {
		return nil, fmt.Errorf("no line holding %s alone: put %s and %s on lines of their own where the latest run's tables belong", DocsBegin, DocsBegin, DocsEnd)
	}
	if end < 0 {
		return nil, fmt.Errorf("no line holding %s alone after %s", DocsEnd, DocsBegin)
	}
	var out bytes.Buffer
	out.Write(bytes.Join(lines[:begin], nil))
	out.WriteString(DocsBegin + "\n\n")
	out.Write(bytes.TrimSpace(content))
	out.WriteString("\n\n")
	out.Write(bytes.Join(lines[end:], nil))
	return out.Bytes(), nil
}
