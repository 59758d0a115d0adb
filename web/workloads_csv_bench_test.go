package web_test

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkWorkloadsCSV exports every workload record as CSV, through the real server and
// PostgreSQL, at 20,000 and 200,000 records, and reports the time to the first row and to the
// whole file and the process's peak resident memory during the export (VmHWM, reset before it):
// a streamed export holds a page of rows, not the file, so the peak stays flat as rows grow.
// The fixture's rows are made before the measurement starts.
func BenchmarkWorkloadsCSV(b *testing.B) {
	for _, n := range []int{20000, 200000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			srv, _, _ := newCSVFixture(b, n, true)
			for b.Loop() {
				resetPeakRSS(b)
				before := peakRSS(b)
				start := time.Now()
				req, _ := http.NewRequest("GET", srv.URL+"/workloads.csv", nil)
				req.Header.Set("Authorization", "Bearer "+tokenOf(srv))
				res, err := srv.Client().Do(req)
				if err != nil || res.StatusCode != http.StatusOK {
					b.Fatalf("export: %v %v", res, err)
				}
				r := bufio.NewReader(res.Body)
				if _, err := r.ReadString('\n'); err != nil {
					b.Fatal(err)
				}
				if _, err := r.ReadString('\n'); err != nil {
					b.Fatal(err)
				}
				first := time.Since(start)
				size, err := io.Copy(io.Discard, r)
				res.Body.Close()
				if err != nil {
					b.Fatal(err)
				}
				whole := time.Since(start)
				b.ReportMetric(first.Seconds()*1000, "ms-first-row")
				b.ReportMetric(whole.Seconds(), "s-whole")
				b.ReportMetric(float64(size)/1e6, "MB")
				b.ReportMetric(float64(peakRSS(b))/1024, "MiB-peak-RSS")
				b.ReportMetric(float64(peakRSS(b)-before)/1024, "MiB-peak-RSS-growth")
			}
		})
	}
}

// resetPeakRSS starts the process's peak resident memory afresh from what it holds now.
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Fatalf("reset the peak resident memory: %v", err)
	}
}

// peakRSS is the process's peak resident memory in KiB (VmHWM).
func peakRSS(b *testing.B) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kib
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}
