// Command arbiter is the Arbiter console, API and scheduler in one binary.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const usage = `arbiter — GPU workload console and scheduler for Kubernetes

Usage:
  arbiter serve [flags]                 console, REST API and scheduler in one process
  arbiter migrate up|down|version       schema migrations
  arbiter devcluster up|down|env        a local Kubernetes control plane with fake GPU nodes
  arbiter version                       build information

Run "arbiter <command> -h" for the flags of a command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "arbiter:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return fmt.Errorf("no command given")
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:])
	case "migrate":
		return runMigrate(ctx, args[1:])
	case "devcluster":
		return runDevcluster(ctx, args[1:])
	case "version", "--version", "-v":
		printVersion()
		return nil
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	default:
		fmt.Fprint(os.Stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}
