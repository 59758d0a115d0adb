package cli

import (
	"net/http"

	"github.com/spf13/cobra"
)

func (a *app) stopCommand() *cobra.Command {
	return a.actionCommand("stop", "Stop a training, workspace or distributed training (it keeps its definition)",
		`Stop a workload: its Job is suspended and its pods end; "arbiter run" starts it again, queued
anew. Inferences cannot be stopped (delete them). Researchers may stop the workloads they submitted.`,
		`  arbiter stop resnet -p team-a`, http.MethodPost, "/suspend", "Stopped")
}
