// Command arbiter is the Arbiter console, API and scheduler in one binary, and the researcher's
// command line that talks to it (package cli).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/arbiterhq/arbiter/cli"
	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// run runs the command args name and returns the exit code.
func run(ctx context.Context, args []string) int {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-v") {
		printVersion()
		return 0
	}
	return cli.Execute(ctx, newRoot(), args, os.Stderr)
}

// newRoot is the whole binary's command tree: the server's commands, which parse their own
// flags as they always have, and the researcher's.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "arbiter",
		Short: "GPU workload console and scheduler for Kubernetes, and its command line",
		Long: `arbiter — GPU workload console and scheduler for Kubernetes.

The server: serve, migrate, devcluster, version. The researcher's command line, which talks to a
server's REST API: login, submit, list, describe, set, stop, run, delete, projects, nodes, types,
priorities (docs/cli.md).`,
		Example: `  arbiter serve --database-url postgres://...
  arbiter login https://arbiter.example.com --client-id $ID
  arbiter submit training resnet -p team-a -i pytorch/pytorch:2.4 -g 2 --priority high -- python train.py
  arbiter describe resnet -p team-a`,
	}
	root.RunE = func(cmd *cobra.Command, _ []string) error { // no command: the usage, to stderr
		cmd.SetOut(cmd.ErrOrStderr())
		_ = cmd.Help()
		return &cli.Error{Code: cli.ExitUsage, Message: "no command given"}
	}
	root.AddCommand(
		ownFlags("serve", "Console, REST API and scheduler in one process", `  arbiter serve -h`, runServe),
		ownFlags("migrate", "Schema migrations: up, down or version", `  arbiter migrate up`, runMigrate),
		ownFlags("devcluster", "A local Kubernetes control plane with fake GPU nodes: up, down or env", `  arbiter devcluster up`, runDevcluster),
		&cobra.Command{Use: "version", Short: "Build information", Example: "  arbiter version", Args: cobra.NoArgs,
			Run: func(*cobra.Command, []string) { printVersion() }},
	)
	cli.AddCommands(root, cli.OSStreams())
	return root
}

// ownFlags is a server command that parses its own flags (its -h lists them); its failure
// ends the binary with 1, as it always has.
func ownFlags(name, short, example string, run func(context.Context, []string) error) *cobra.Command {
	return &cobra.Command{
		Use: name + " [flags]", Short: short, Example: example,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := run(cmd.Context(), args); err != nil {
				return &cli.Error{Code: cli.ExitRefused, Message: err.Error()}
			}
			return nil
		},
	}
}
