package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
)

const devclusterUsage = `Usage:
  arbiter devcluster up [--nodes SPEC] [--dir DIR] [--kube-scheduler] [--operators LIST]
                                  start a local control plane with fake GPU nodes and leave it running
  arbiter devcluster down [--dir DIR]
                                  stop the processes "up" started in DIR
  arbiter devcluster env [--dir DIR]
                                  print "export KUBECONFIG=..." for DIR's cluster
  arbiter devcluster build [--operators LIST]
                                  build all the binaries (kube-scheduler too, and the operators
                                  listed) into the cache if missing; "up" and tests build what
                                  they need themselves

SPEC is a comma-separated list of POOL=NODESxGPUS, e.g. a100=4x8,h100=2x8 (see docs/devcluster.md).
LIST is a comma-separated list of operators whose CRDs are installed and controllers run against
the cluster: jobset, lws, training-operator, trainer (adds jobset), kuberay, or all; and kueue,
the benchmarks' peer, which "all" leaves out (docs/performance.md).
`

const defaultDevclusterDir = "./.arbiter/devcluster"

func runDevcluster(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, devclusterUsage)
		return fmt.Errorf("devcluster: no subcommand given")
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("devcluster "+sub, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), devclusterUsage) }
	dir := fs.String("dir", defaultDevclusterDir, "directory holding the cluster's state, keys, kubeconfig and logs")
	switch sub {
	case "up":
		nodes := fs.String("nodes", devcluster.DefaultNodes, "node pools of fake GPU nodes, POOL=NODESxGPUS,...")
		kubeScheduler := fs.Bool("kube-scheduler", false, "also run kube-scheduler (a benchmark baseline; Arbiter is the scheduler)")
		operatorList := fs.String("operators", "", "operators to run: jobset,lws,training-operator,trainer,kuberay or all, and kueue")
		if err := fs.Parse(args); err != nil {
			return err
		}
		operators, err := devcluster.ParseOperators(*operatorList)
		if err != nil {
			return err
		}
		start := time.Now()
		c, err := devcluster.Start(ctx, devcluster.Options{
			Dir:           *dir,
			Nodes:         *nodes,
			KubeScheduler: *kubeScheduler,
			Operators:     operators,
			Progress:      os.Stderr,
			Detach:        true,
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "devcluster: ready in %s; kubeconfig %s\n", time.Since(start).Round(100*time.Millisecond), c.Kubeconfig())
		fmt.Fprintf(os.Stderr, "devcluster: stop it with: arbiter devcluster down --dir %s\n", *dir)
		fmt.Printf("export KUBECONFIG=%s\n", c.Kubeconfig())
		return nil
	case "down":
		if err := fs.Parse(args); err != nil {
			return err
		}
		return devcluster.StopDir(*dir)
	case "env":
		if err := fs.Parse(args); err != nil {
			return err
		}
		kc, err := devcluster.KubeconfigPath(*dir)
		if err != nil {
			return err
		}
		fmt.Printf("export KUBECONFIG=%s\n", kc)
		return nil
	case "build":
		operatorList := fs.String("operators", "", "operators to build too: jobset,lws,training-operator,trainer,kuberay or all, and kueue")
		if err := fs.Parse(args); err != nil {
			return err
		}
		operators, err := devcluster.ParseOperators(*operatorList)
		if err != nil {
			return err
		}
		start := time.Now()
		b, err := devcluster.EnsureBinaries(ctx, os.Stderr, devcluster.AllComponents...)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "devcluster: binaries %s in %s (%s)\n", b.Version, b.Dir, time.Since(start).Round(time.Millisecond))
		ops, err := devcluster.EnsureOperators(ctx, os.Stderr, operators...)
		if err != nil {
			return err
		}
		for _, o := range ops {
			fmt.Fprintf(os.Stderr, "devcluster: operator %s %s in %s\n", o.Name, o.Version, o.Dir)
		}
		return nil
	case "-h", "--help", "help":
		fmt.Print(devclusterUsage)
		return nil
	default:
		fmt.Fprint(os.Stderr, devclusterUsage)
		return fmt.Errorf("devcluster: unknown subcommand %q", sub)
	}
}
