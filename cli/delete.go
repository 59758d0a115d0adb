package cli

import (
	"net/http"

	"github.com/spf13/cobra"
)

func (a *app) deleteCommand() *cobra.Command {
	return a.actionCommand("delete", "Delete a workload and its pods",
		`Delete a workload: its top owner and, with it, its pods and Service. Its record stays in the
history ("arbiter list --finished").`,
		`  arbiter delete resnet -p team-a`, http.MethodDelete, "", "Deleted")
}
