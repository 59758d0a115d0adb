package store

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// The kinds of failure callers act on; web maps each to one HTTP status in one place.
var (
	ErrNotFound    = errors.New("not found")
	ErrConflict    = errors.New("conflict")
	ErrInvalid     = errors.New("invalid")
	ErrUnavailable = errors.New("database unavailable")
	// ErrUnauthenticated and ErrForbidden are a caller not signed in, and one whose role does
	// not allow the action; ErrBusy is a bounded resource all taken (try again after
	// RetryAfter). The application layer (the workloads service) refuses with them, so that
	// its refusals are mapped where the store's are.
	ErrUnauthenticated = errors.New("not signed in")
	ErrForbidden       = errors.New("forbidden")
	ErrBusy            = errors.New("busy")
)

// Error carries a sentence a person can act on, the kind it is, and, for a refused value, the
// field it concerns (the API's JSON name, such as "name", "labelKey" or "resources"), so that
// a form shows the sentence next to that field. Field is empty when no one field is at fault.
type Error struct {
	Kind    error
	Message string
	Field   string
	// RetryAfter, in seconds, is when a refusal that will pass (ErrBusy, ErrUnavailable) is
	// worth trying again; 0 says nothing.
	RetryAfter int
	cause      error
}

func (e *Error) Error() string {
	if e.cause != nil {
		return e.Message + ": " + e.cause.Error()
	}
	return e.Message
}

// Is lets errors.Is match the kind (ErrNotFound, ...) as well as the cause chain.
func (e *Error) Is(target error) bool { return target == e.Kind }
func (e *Error) Unwrap() error        { return e.cause }

// NotFound, Conflict and Invalid build typed errors with a message for people.
func NotFound(format string, args ...any) error {
	return &Error{Kind: ErrNotFound, Message: fmt.Sprintf(format, args...)}
}
func Conflict(format string, args ...any) error {
	return &Error{Kind: ErrConflict, Message: fmt.Sprintf(format, args...)}
}
func Invalid(format string, args ...any) error {
	return &Error{Kind: ErrInvalid, Message: fmt.Sprintf(format, args...)}
}

// Unauthenticated, Forbidden and Unavailable build typed errors with a message for people:
// sign in first, your role does not allow it, something this needs is not there now.
func Unauthenticated(format string, args ...any) error {
	return &Error{Kind: ErrUnauthenticated, Message: fmt.Sprintf(format, args...)}
}
func Forbidden(format string, args ...any) error {
	return &Error{Kind: ErrForbidden, Message: fmt.Sprintf(format, args...)}
}
func Unavailable(format string, args ...any) error {
	return &Error{Kind: ErrUnavailable, Message: fmt.Sprintf(format, args...)}
}

// Busy refuses for now: a bound is reached; retryAfter (seconds) says when to try again.
func Busy(retryAfter int, format string, args ...any) error {
	return &Error{Kind: ErrBusy, RetryAfter: retryAfter, Message: fmt.Sprintf(format, args...)}
}

// ConflictField refuses the value of one field because of another object (a name taken).
func ConflictField(field, format string, args ...any) error {
	return &Error{Kind: ErrConflict, Field: field, Message: fmt.Sprintf(format, args...)}
}

// InvalidField refuses the value of one field, named as the API names it.
func InvalidField(field, format string, args ...any) error {
	return &Error{Kind: ErrInvalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

// FieldOf is the field a refusal concerns, or "" when it names none.
func FieldOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

func unavailable(cause error) error {
	return &Error{Kind: ErrUnavailable, Message: "the database is unavailable; try again shortly", cause: cause}
}

// classify turns driver errors into typed ones: connection failures become ErrUnavailable,
// constraint violations ErrConflict/ErrInvalid. Typed errors pass through unchanged.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var typed *Error
	if errors.As(err, &typed) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			return &Error{Kind: ErrConflict, Message: "an object with that name already exists", cause: err}
		case "23503": // foreign_key_violation
			return &Error{Kind: ErrInvalid, Message: "the change refers to an object that does not exist", cause: err}
		case "23514", "22P02", "22003": // check_violation, invalid_text_representation, numeric out of range
			return &Error{Kind: ErrInvalid, Message: "a value is out of its allowed range", cause: err}
		case "22021", "22P05": // character_not_in_repertoire (NUL, bytes that are not UTF-8), untranslatable_character (\u0000 in jsonb)
			return &Error{Kind: ErrInvalid, Message: "a text value holds a NUL character or bytes that are not UTF-8; send UTF-8 text without NUL", cause: err}
		case "54000": // program_limit_exceeded: a value too large for an index entry
			return &Error{Kind: ErrInvalid, Message: "a text value is too long; shorten it", cause: err}
		case "57P01", "57P02", "57P03", "53300": // admin shutdown, crash shutdown, cannot connect now, too many connections
			return unavailable(err)
		}
		return err
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	if errors.As(err, &connErr) || errors.As(err, &netErr) || pgconn.SafeToRetry(err) || errors.Is(err, context.DeadlineExceeded) {
		return unavailable(err)
	}
	return err
}
