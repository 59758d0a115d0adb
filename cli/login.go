package cli

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

type loginFlags struct {
	clientID, clientSecret, username, password string
	secretStdin                                bool
}

func (a *app) loginCommand() *cobra.Command {
	var f loginFlags
	c := &cobra.Command{
		Use:   "login [URL]",
		Short: "Sign in to an Arbiter server with an access key or a local account",
		Long: `Sign in to an Arbiter server and keep the sign-in for the other commands.

With an access key or service account: --client-id ID, and its secret from $ARBITER_CLIENT_SECRET,
from stdin (--secret-stdin) or typed at a prompt. With a local account: --username NAME, and its
password from $ARBITER_PASSWORD, stdin (--secret-stdin) or a prompt. A secret given as a flag value
is accepted, as Run:ai's CLI does, but other users can read it in the process list.

What is kept is an access token and a refresh token (never the secret), in config.yaml under your
configuration directory with permissions 0600; the access token is renewed with the refresh token
for 30 days, until "arbiter logout" revokes it. Without URL: $ARBITER_URL, else the server you last
signed in to. -p keeps a default project.`,
		Example: `  # an access key, its secret typed at the prompt
  arbiter login https://arbiter.example.com --client-id 0b6c3e0e-9a2f-4d6e-9d7c-5f3b1f1d2a11

  # in a script: the secret from the environment, a default project kept
  ARBITER_CLIENT_SECRET=... arbiter login https://arbiter.example.com --client-id $ID -p team-a

  # a local account, the password piped in
  pass show arbiter | arbiter login https://arbiter.example.com --username alice --secret-stdin`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, positional []string) error {
			if len(positional) == 1 {
				a.urlFlag = positional[0]
			}
			return a.login(cmd, f)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.clientID, "client-id", "", "an access key's or service account's client id")
	fl.StringVar(&f.clientSecret, "client-secret", "", "its secret (better: $ARBITER_CLIENT_SECRET, --secret-stdin or the prompt)")
	fl.StringVar(&f.username, "username", "", "a local account's user name")
	fl.StringVar(&f.password, "password", "", "its password (better: $ARBITER_PASSWORD, --secret-stdin or the prompt)")
	fl.BoolVar(&f.secretStdin, "secret-stdin", false, "read the secret or password from the first line of stdin")
	fl.BoolVar(&f.secretStdin, "password-stdin", false, "the same as --secret-stdin")
	a.addProjectFlag(c)
	return c
}

func (a *app) login(cmd *cobra.Command, f loginFlags) error {
	base, err := a.serverURL()
	if err != nil {
		return usageError("say which server to sign in to: arbiter login URL")
	}
	if u, perr := url.Parse(base); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError("%s is not a server's URL; give one such as https://arbiter.example.com", base)
	}
	var body map[string]string
	var subject string
	switch {
	case f.clientID != "" && f.username != "":
		return usageError("sign in with --client-id or with --username, not both")
	case f.clientID != "":
		secret, err := a.secret(f.clientSecret, "ARBITER_CLIENT_SECRET", "client secret", f.secretStdin, "--client-secret")
		if err != nil {
			return err
		}
		body = map[string]string{"grantType": "client_credentials", "clientId": f.clientID, "clientSecret": secret}
		subject = f.clientID
	case f.username != "":
		secret, err := a.secret(f.password, "ARBITER_PASSWORD", "password", f.secretStdin, "--password")
		if err != nil {
			return err
		}
		body = map[string]string{"grantType": "password", "username": f.username, "password": secret}
		subject = f.username
	default:
		return usageError("say who signs in: --client-id ID (an access key) or --username NAME (a local account)")
	}
	if a.cfg.URL != "" && a.cfg.URL != base && a.cfg.RefreshToken != "" {
		// Signing in elsewhere: end the sign-in kept for the other server first.
		a.revokeKept(cmd)
	}
	api := &client{app: a, base: base, http: &http.Client{Timeout: a.timeout}}
	status, raw, err := api.send(cmd.Context(), http.MethodPost, "/api/v1/token", nil, body, "")
	if err != nil {
		return err
	}
	var t tokenAnswer
	if err := decodeAnswer(status, raw, &t, base); err != nil {
		if status == http.StatusUnauthorized { // wrong credentials: a refusal, not an expired sign-in
			return refused("%s", strings.TrimSuffix(err.Error(), "; sign in again with: arbiter login "+base))
		}
		return err
	}
	a.cfg = Config{URL: base, Project: firstOf(a.projectFlag, a.cfg.Project), Subject: subject}
	if err := a.keepTokens(t); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Signed in to %s as %s.\n", base, subject)
	if a.cfg.RefreshToken != "" {
		fmt.Fprintf(a.stdout, "The sign-in is kept in %s and renewed until %s; \"arbiter logout\" ends it.\n",
			a.cfgPath, a.now().Add(30*24*time.Hour).UTC().Format("2006-01-02"))
	}
	return nil
}

// secret is the secret of a sign-in: the flag's value (warned about), else the environment's,
// else stdin's first line with --secret-stdin, else typed at a prompt when stdin is a terminal.
func (a *app) secret(flagValue, envName, what string, fromStdin bool, flagName string) (string, error) {
	if flagValue != "" {
		fmt.Fprintf(a.stderr, "warning: a %s given as %s can be read by other users in the process list; prefer $%s or --secret-stdin\n", what, flagName, envName)
		return flagValue, nil
	}
	if v := a.env(envName); v != "" {
		return v, nil
	}
	if fromStdin {
		line, err := bufio.NewReader(io.LimitReader(a.stdin, 4096)).ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if err != nil && err != io.EOF {
				return "", usageError("reading the %s from stdin: %v", what, err)
			}
			return "", usageError("stdin is empty: pipe the %s in with --secret-stdin", what)
		}
		return line, nil
	}
	if !a.terminal(a.stdin) {
		return "", usageError("no %s: set $%s, pipe it in with --secret-stdin, or run in a terminal to be asked", what, envName)
	}
	fmt.Fprintf(a.stderr, "%s: ", strings.ToUpper(what[:1])+what[1:])
	file, _ := a.stdin.(*os.File)
	b, err := term.ReadPassword(int(file.Fd()))
	fmt.Fprintln(a.stderr)
	if err != nil {
		return "", usageError("reading the %s: %v", what, err)
	}
	if len(b) == 0 {
		return "", usageError("no %s typed", what)
	}
	return string(b), nil
}
