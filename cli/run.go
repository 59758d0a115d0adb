package cli

import (
	"net/http"

	"github.com/spf13/cobra"
)

func (a *app) runCommand() *cobra.Command {
	return a.actionCommand("run", "Run a stopped workload again",
		`Run a workload its owner stopped: it queues again and starts when the scheduler admits it.`,
		`  arbiter run resnet -p team-a`, http.MethodPost, "/resume", "Run again, it queues")
}
