package cli

import (
	"errors"
	"fmt"
)

// Exit codes scripts can rely on (docs/cli.md "Exit codes").
const (
	ExitDone        = 0 // the command did what it was asked
	ExitRefused     = 1 // the server refused (its sentence is on stderr)
	ExitUsage       = 2 // the command line itself is wrong
	ExitSignedOut   = 3 // not signed in, or the sign-in has expired or was revoked: run arbiter login
	ExitNotFound    = 4 // no such workload, project or route
	ExitUnavailable = 5 // the server or the network does not answer, or the server failed
)

// Error is a command's failure: the exit code it ends with and the sentence it prints.
type Error struct {
	Code    int
	Message string
}

func (e *Error) Error() string { return e.Message }

func usageError(format string, args ...any) error {
	return &Error{Code: ExitUsage, Message: fmt.Sprintf(format, args...)}
}

func refused(format string, args ...any) error {
	return &Error{Code: ExitRefused, Message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &Error{Code: ExitNotFound, Message: fmt.Sprintf(format, args...)}
}

func signedOut(format string, args ...any) error {
	return &Error{Code: ExitSignedOut, Message: fmt.Sprintf(format, args...)}
}

func unavailable(format string, args ...any) error {
	return &Error{Code: ExitUnavailable, Message: fmt.Sprintf(format, args...)}
}

// CodeOf is the exit code err ends the command with: an Error's own, else ExitRefused.
func CodeOf(err error) int {
	if err == nil {
		return ExitDone
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ExitRefused
}

// codeOfStatus maps an HTTP status of the API to an exit code.
func codeOfStatus(status int) int {
	switch {
	case status == 401:
		return ExitSignedOut
	case status == 404:
		return ExitNotFound
	case status >= 500:
		return ExitUnavailable
	default:
		return ExitRefused
	}
}
