package main

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
)

func runServe(ctx context.Context, args []string) error   { return errors.New("serve: not built yet") }
func runMigrate(ctx context.Context, args []string) error { return errors.New("migrate: not built yet") }

func printVersion() {
	info, _ := debug.ReadBuildInfo()
	fmt.Println("arbiter", info.Main.Version, info.GoVersion)
}
