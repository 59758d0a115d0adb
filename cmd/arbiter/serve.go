package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/arbiterhq/arbiter/migrations"
	"github.com/arbiterhq/arbiter/server"
)

func runServe(ctx context.Context, args []string) error {
	cfg, err := server.ParseConfig("arbiter serve", args, os.Stderr)
	if err != nil {
		return err
	}
	log, err := server.NewLogger(cfg, os.Stderr)
	if err != nil {
		return err
	}
	server.RouteKlog(log)
	return server.Serve(ctx, cfg, log, os.Stdout, nil)
}

func runMigrate(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("migrate: say up, down or version")
	}
	action := args[0]
	cfg, err := server.ParseConfig("arbiter migrate "+action, args[1:], os.Stderr)
	if err != nil {
		return err
	}
	log, err := server.NewLogger(cfg, os.Stderr)
	if err != nil {
		return err
	}
	url, stop, err := server.Database(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stop()
	switch action {
	case "up":
		if err := migrations.Up(url); err != nil {
			return err
		}
		fmt.Println("schema is at version", migrations.Latest())
	case "down":
		if err := migrations.Down(url); err != nil {
			return err
		}
		fmt.Println("every migration reverted")
	case "version":
		v, dirty, applied, err := migrations.Version(url)
		if err != nil {
			return err
		}
		switch {
		case !applied:
			fmt.Printf("no migration applied (this binary has %d)\n", migrations.Latest())
		case dirty:
			fmt.Printf("version %d, dirty: a migration failed halfway; fix it and force the version\n", v)
		default:
			fmt.Printf("version %d (this binary has %d)\n", v, migrations.Latest())
		}
	default:
		return fmt.Errorf("migrate: unknown action %q; say up, down or version", action)
	}
	return nil
}

func printVersion() {
	version, goVersion, revision := "(devel)", "", ""
	if info, ok := debug.ReadBuildInfo(); ok {
		version, goVersion = info.Main.Version, info.GoVersion
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	fmt.Printf("arbiter %s %s %s\n", version, revision, goVersion)
}
