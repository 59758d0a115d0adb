package main

import (
	"context"
	"errors"
)

// runDevcluster is replaced by the devcluster work (issue 4).
func runDevcluster(ctx context.Context, args []string) error {
	return errors.New("devcluster: not built yet")
}
