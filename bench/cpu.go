package bench

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

// clockTicks is USER_HZ, the unit of /proc CPU times (100 on every Linux Go supports).
const clockTicks = 100

// cpuTimes is CPU time used so far, by process group name ("total" is the whole machine).
type cpuTimes map[string]time.Duration

// readCPU reads the CPU time used by each named process, by this process ("bench": the load
// generator and the pod watcher that measures), by every postgres process, and by the machine.
func readCPU(pids map[string]int) cpuTimes {
	t := cpuTimes{}
	for name, pid := range pids {
		t[name] = procCPU(pid)
	}
	t["bench"] = procCPU(os.Getpid())
	// PostgreSQL's backends come and go with connections: their time is counted while they
	// live and, once the postmaster has reaped them, in its children's time.
	matches, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, m := range matches {
		comm, err := os.ReadFile(m)
		if err != nil || !strings.HasPrefix(string(comm), "postgres") {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(m)))
		t["postgres"] += procCPU(pid) + childrenCPU(pid)
	}
	if stat, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(stat), "\n")
		f := strings.Fields(line)
		var busy int64
		for i, v := range f[1:] {
			if i == 3 || i == 4 { // idle, iowait
				continue
			}
			n, _ := strconv.ParseInt(v, 10, 64)
			busy += n
		}
		t["total"] = ticks(busy)
	}
	return t
}

// procCPU is a process's own user+system time, or 0 when it is gone.
func procCPU(pid int) time.Duration { return statTicks(pid, 11, 12) }

// childrenCPU is the user+system time of a process's children it has reaped.
func childrenCPU(pid int) time.Duration { return statTicks(pid, 13, 14) }

// statTicks sums fields of /proc/pid/stat, counted after the parenthesised command name
// (utime, stime, cutime and cstime are 11 to 14 there).
func statTicks(pid int, fields ...int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	if !ok {
		return 0
	}
	f := strings.Fields(rest)
	if len(f) < 15 {
		return 0
	}
	var sum int64
	for _, i := range fields {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		sum += n
	}
	return ticks(sum)
}

func ticks(n int64) time.Duration { return time.Duration(n) * time.Second / clockTicks }

// since formats the CPU used between two readings, largest first: "total 98s: apiserver 40s, …".
func (t cpuTimes) since(before cpuTimes) string {
	used := map[string]time.Duration{}
	for name, d := range t {
		if name != "total" {
			used[name] = d - before[name]
		}
	}
	return fmt.Sprintf("CPU %.1fs: %s", (t["total"] - before["total"]).Seconds(),
		largestFirst(used, func(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }))
}

// peakMemory formats the largest resident set each named process has had (VmHWM), largest
// first: "kube-apiserver 2.1 GB, …". It shows what the control plane's raised GOGC costs.
func peakMemory(pids map[string]int) string {
	peakKB := map[string]int64{}
	for name, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				peakKB[name], _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			}
		}
	}
	return "peak memory (resident): " + largestFirst(peakKB, func(kb int64) string { return fmt.Sprintf("%.2f GB", float64(kb)/1e6) })
}

// residentMemory formats a process's resident set now (VmRSS).
func residentMemory(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "resident memory unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return fmt.Sprintf("resident memory now %.0f MB", float64(kb)/1e3)
		}
	}
	return "resident memory unknown"
}

// largestFirst formats "name value" pairs, largest value first, joined by commas.
func largestFirst[V cmp.Ordered](m map[string]V, format func(V) string) string {
	names := slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Compare(m[b], m[a]) })
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = name + " " + format(m[name])
	}
	return strings.Join(parts, ", ")
}

// quietCPU is how little CPU the control plane uses over quietWindow once it has done what
// the last writes gave it to do: a tenth of a core (its leases and resyncs take less).
const (
	quietCPU    = 100 * time.Millisecond
	quietWindow = time.Second
)

// waitQuiet waits until the processes in pids have used less than quietCPU over the last
// quietWindow, at most timeout, and returns how long that took and whether they did. A
// backlog's last pod created is not the end of the control plane's work: the Job controller
// then writes each Job's status (about 1.5 CPU-seconds for 5,000 Jobs), and the API server
// and etcd store it and send it to every watch of Jobs, for about 3 s on two cores.
func waitQuiet(pids map[string]int, timeout time.Duration) (time.Duration, bool) {
	type sample struct {
		at  time.Time
		cpu time.Duration
	}
	read := func() sample {
		s := sample{at: time.Now()}
		for _, pid := range pids {
			s.cpu += procCPU(pid)
		}
		return s
	}
	start := time.Now()
	samples := []sample{read()}
	quiet := poll.Within(timeout, func() bool {
		now := read()
		samples = append(samples, now)
		// the window starts at the newest sample that is at least quietWindow old
		for len(samples) > 2 && now.at.Sub(samples[1].at) >= quietWindow {
			samples = samples[1:]
		}
		first := samples[0]
		return now.at.Sub(first.at) >= quietWindow && now.cpu-first.cpu < quietCPU
	})
	return time.Since(start), quiet
}
