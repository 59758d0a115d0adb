// Package cli is the researcher's command line in the arbiter binary: login, submit, list,
// describe, set, stop, run, delete and the dictionaries. It talks to an Arbiter server through
// its REST API only, over HTTP, as any other client does; it imports none of the server's
// packages (test/architecture keeps it so).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Streams are the process's standard streams and environment; tests give their own.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
	Env      func(string) string
	// Terminal says whether a stream is a terminal (colour on Out, prompts on In).
	Terminal func(f any) bool
	Now      func() time.Time
}

// OSStreams are the process's own.
func OSStreams() Streams {
	return Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Env: os.Getenv, Now: time.Now,
		Terminal: func(f any) bool {
			file, ok := f.(*os.File)
			return ok && term.IsTerminal(int(file.Fd()))
		}}
}

// app is one run of a command: its streams, the global flags and the configuration.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	env            func(string) string
	terminal       func(any) bool
	now            func() time.Time

	urlFlag, projectFlag, output string
	timeout                      time.Duration

	cfgPath string
	cfg     Config
	api     *client
}

// AddCommands adds the researcher's commands and their global flags to root.
func AddCommands(root *cobra.Command, s Streams) {
	a := &app{stdin: s.In, stdout: s.Out, stderr: s.Err, env: s.Env, terminal: s.Terminal, now: s.Now}
	if a.terminal == nil {
		a.terminal = func(any) bool { return false }
	}
	if a.now == nil {
		a.now = time.Now
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.urlFlag, "url", "", "the Arbiter server (default: $ARBITER_URL, else the one you signed in to)")
	pf.StringVarP(&a.output, "output", "o", "table", "output format: table, json or yaml")
	pf.DurationVar(&a.timeout, "timeout", 30*time.Second, "how long to wait for each answer of the server")
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError("%v", err) })
	for _, c := range []*cobra.Command{
		a.loginCommand(), a.logoutCommand(), a.submitCommand(), a.listCommand(), a.describeCommand(), a.setCommand(),
		a.stopCommand(), a.runCommand(), a.deleteCommand(), a.projectsCommand(), a.nodesCommand(), a.typesCommand(),
		a.prioritiesCommand(),
	} {
		c.PersistentPreRunE = a.prepare
		root.AddCommand(c)
	}
}

// prepare reads the configuration and checks the global flags before a command runs.
func (a *app) prepare(cmd *cobra.Command, _ []string) error {
	switch a.output {
	case "table", "json", "yaml":
	default:
		return usageError("-o %s is not an output format; use table, json or yaml", a.output)
	}
	if a.timeout <= 0 {
		return usageError("--timeout must be above zero, not %v", a.timeout)
	}
	path, err := configPath(a.env)
	if err != nil {
		return err
	}
	a.cfgPath = path
	if a.cfg, err = loadConfig(path); err != nil {
		return err
	}
	return nil
}

// serverURL is the server to call: --url, else $ARBITER_URL, else the config file's.
func (a *app) serverURL() (string, error) {
	u := firstOf(a.urlFlag, a.env("ARBITER_URL"), a.cfg.URL)
	if u == "" {
		return "", signedOut("no server: sign in with arbiter login URL, or set ARBITER_URL")
	}
	return strings.TrimRight(u, "/"), nil
}

// project is the project to work in: -p, else $ARBITER_PROJECT, else the config file's.
func (a *app) project() string {
	return firstOf(a.projectFlag, a.env("ARBITER_PROJECT"), a.cfg.Project)
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// client is the API client of the server to call.
func (a *app) client() (*client, error) {
	if a.api != nil {
		return a.api, nil
	}
	u, err := a.serverURL()
	if err != nil {
		return nil, err
	}
	a.api = &client{app: a, base: u, http: &http.Client{Timeout: a.timeout}}
	return a.api, nil
}

// keepTokens keeps a granted token pair in the config file.
func (a *app) keepTokens(t tokenAnswer) error {
	a.cfg.AccessToken = t.AccessToken
	a.cfg.AccessExpires = a.now().Add(time.Duration(t.ExpiresIn) * time.Second)
	if t.RefreshToken != "" {
		a.cfg.RefreshToken = t.RefreshToken
	}
	return saveConfig(a.cfgPath, a.cfg)
}

// addProjectFlag adds -p/--project to a command.
func (a *app) addProjectFlag(c *cobra.Command) {
	c.Flags().StringVarP(&a.projectFlag, "project", "p", "", "the project (default: $ARBITER_PROJECT, else the config file's)")
}

// colour paints s with an ANSI colour when the output is a terminal and NO_COLOR is unset.
func (a *app) colour(code, s string) string {
	if a.env("NO_COLOR") != "" || !a.terminal(a.stdout) || a.output != "table" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Execute runs root with args and returns the exit code, having printed the error's sentence.
func Execute(ctx context.Context, root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	root.SilenceErrors, root.SilenceUsage = true, true
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitDone
	}
	var e *Error
	if !errors.As(err, &e) && isCobraUsage(err) {
		err = usageError("%v", err)
	}
	msg := err.Error()
	if CodeOf(err) == ExitUsage {
		msg += "\nRun \"arbiter --help\" or \"arbiter COMMAND --help\" for the commands and their flags."
	}
	fmt.Fprintln(stderr, "arbiter:", msg)
	return CodeOf(err)
}

// isCobraUsage tells cobra's own command-line errors (unknown command, wrong arguments).
func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "unknown flag", "unknown shorthand", "flag needs", "invalid argument"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// args wraps a cobra argument check so that its refusal is a usage error.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return usageError("%v", err)
		}
		return nil
	}
}
