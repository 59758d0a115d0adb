package cli

import (
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"
)

func (a *app) logoutCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "logout",
		Short: "End the sign-in: revoke the refresh token and forget both tokens",
		Long: `End the sign-in kept by "arbiter login": the server revokes the refresh token, so it can no
longer be traded for access tokens, and both tokens are deleted from the config file (the server
and the default project stay). An access token already handed out lasts until it expires (an hour
at most).`,
		Example: `  arbiter logout`,
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.cfg.RefreshToken == "" && a.cfg.AccessToken == "" {
				fmt.Fprintln(a.stdout, "Not signed in.")
				return nil
			}
			revokeErr := a.revokeKept(cmd)
			a.cfg.AccessToken, a.cfg.RefreshToken, a.cfg.Subject = "", "", ""
			a.cfg.AccessExpires = time.Time{}
			if err := saveConfig(a.cfgPath, a.cfg); err != nil {
				return err
			}
			if revokeErr != nil {
				return &Error{Code: CodeOf(revokeErr), Message: "the tokens were deleted here, but the server could not revoke the refresh token: " + revokeErr.Error()}
			}
			fmt.Fprintf(a.stdout, "Signed out of %s.\n", a.cfg.URL)
			return nil
		},
	}
}

// revokeKept asks the server of the kept sign-in to revoke its refresh token.
func (a *app) revokeKept(cmd *cobra.Command) error {
	if a.cfg.RefreshToken == "" || a.cfg.URL == "" {
		return nil
	}
	api := &client{app: a, base: a.cfg.URL, http: &http.Client{Timeout: a.timeout}}
	status, raw, err := api.send(cmd.Context(), http.MethodPost, "/api/v1/token/revoke", nil, map[string]string{"refreshToken": a.cfg.RefreshToken}, "")
	if err != nil {
		return err
	}
	return decodeAnswer(status, raw, nil, a.cfg.URL)
}
