package benchreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// unitEndings are the figure endings of the convention, as a person reads them.
var unitEndings = []struct{ ending, unit string }{
	{"-ms", "ms"},
	{"-s", "s"},
	{"-pct", "%"},
	{"-MB", "MB"},
	{"-x", "×"},
}

// Label is a figure's name as a table row or chart says it: p99-s is "p99 (s)",
// first-bind-s "first bind (s)", a bare s "time (s)"; names outside the convention (pods/s,
// ns/op, binds) stay as they are.
func Label(name string) string {
	switch name {
	case "s":
		return "time (s)"
	case "x":
		return "ratio (×)"
	case "ns/op":
		return "time per op"
	case "B/op":
		return "bytes per op"
	case "allocs/op":
		return "allocations per op"
	}
	if what, ok := strings.CutSuffix(name, "-ms/op"); ok && what != "" {
		return strings.ReplaceAll(what, "-", " ") + " (ms per op)"
	}
	for _, e := range unitEndings {
		if what, ok := strings.CutSuffix(name, e.ending); ok && what != "" {
			return strings.ReplaceAll(what, "-", " ") + " (" + e.unit + ")"
		}
	}
	return name
}

// Better says which way a figure improves, where its unit says so plainly: time and memory
// lower, a rate higher. "" where the unit alone does not tell (a percentage, a count).
func Better(name string) string {
	switch {
	case strings.HasSuffix(name, "/s"):
		return "higher"
	case name == "s", strings.HasSuffix(name, "-s"), strings.HasSuffix(name, "-ms"), strings.HasSuffix(name, "-MB"),
		name == "ns/op", name == "B/op", name == "allocs/op":
		return "lower"
	}
	return ""
}

// Number writes a figure with the digits that matter: three significant ones, no exponent,
// thousands grouped.
func Number(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'f', -1, 64)
	case v == 0:
		return "0"
	case a >= 1000 || (v == math.Trunc(v) && a < 1e15):
		return group(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func group(digits string) string {
	sign := ""
	if strings.HasPrefix(digits, "-") {
		sign, digits = "-", digits[1:]
	}
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return sign + b.String()
}

// Duration writes a time as a person says it: 850 ms, 4.2 s, 8 min 22 s, 1 h 2 min.
func Duration(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%d ns", d.Nanoseconds())
	case d < time.Millisecond:
		return Number(float64(d.Nanoseconds())/1e3) + " µs"
	case d < time.Second:
		return Number(float64(d.Nanoseconds())/1e6) + " ms"
	case d < time.Minute:
		return Number(d.Seconds()) + " s"
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
}

// valueText is a value of the figure name as a table cell: the number (a time for ns/op), and
// how many runs it is the mean of when more than one.
func valueText(name string, v Value) string {
	s := Number(v.Value)
	if name == "ns/op" {
		s = Duration(time.Duration(v.Value))
	}
	if v.N > 1 {
		s += fmt.Sprintf(" (mean of %d)", v.N)
	}
	return s
}
