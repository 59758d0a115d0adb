package devcluster

import (
	"path/filepath"
	"testing"
)

// Kueue's harness is built from a module of its own: pinned to another release than Kueue's
// controller, it would calibrate this machine with another Kueue than the one the benchmarks
// compare Arbiter with.
func TestKueueHarnessIsPinnedToTheControllersRelease(t *testing.T) {
	src, err := operatorSource()
	if err != nil {
		t.Fatal(err)
	}
	controller, err := requiredVersion(filepath.Join(src, OperatorKueue, "go.mod"), "sigs.k8s.io/kueue")
	if err != nil {
		t.Fatal(err)
	}
	harness, err := requiredVersion(filepath.Join(src, kueueHarnessModule, "go.mod"), "sigs.k8s.io/kueue")
	if err != nil {
		t.Fatal(err)
	}
	if harness != controller {
		t.Errorf("hack/operators/%s pins Kueue %s, hack/operators/%s %s: move both together", kueueHarnessModule, harness, OperatorKueue, controller)
	}
}
