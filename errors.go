package revisit

import (
	"errors"
	"fmt"
	"slices"
)

// ErrorCode classifies an Error; the HTTP layer maps each code to a status.
type ErrorCode string

// The error codes of revisit.
const (
	CodeInvalid       ErrorCode = "invalid"        // bad input from the caller
	CodeNotFound      ErrorCode = "not_found"      // the named object does not exist
	CodeConflict      ErrorCode = "conflict"       // the object exists already
	CodeStaleData     ErrorCode = "stale_data"     // optimistic update lost a race
	CodeUnknownPolicy ErrorCode = "unknown_policy" // grab_next_visits policy name unknown
	CodeUnavailable   ErrorCode = "unavailable"    // a dependency (database, broker) is unreachable
	CodeInternal      ErrorCode = "internal"       // anything else
)

// Error is a domain error with a code, a message meant for users and, for
// invalid input, the field that is wrong.
type Error struct {
	Code    ErrorCode
	Message string
	Field   string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s", e.Field, e.Message)
	}
	return e.Message
}

// Is makes errors.Is(err, ErrNotFound) and the other sentinels match on code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Message == "" && t.Code == e.Code
}

// Sentinels for errors.Is: they match any *Error of the same code.
var (
	ErrInvalid       = &Error{Code: CodeInvalid}
	ErrNotFound      = &Error{Code: CodeNotFound}
	ErrConflict      = &Error{Code: CodeConflict}
	ErrStaleData     = &Error{Code: CodeStaleData}
	ErrUnknownPolicy = &Error{Code: CodeUnknownPolicy}
	ErrUnavailable   = &Error{Code: CodeUnavailable}
)

// Errorf returns an *Error of the given code.
func Errorf(code ErrorCode, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalidf returns an invalid-input *Error naming the field at fault.
//
// A long text among args (a value the caller sent) is cut to its first 80
// bytes and its length, so that the error stays short whatever was sent.
func Invalidf(field, format string, args ...any) error {
	return &Error{Code: CodeInvalid, Field: field, Message: fmt.Sprintf(format, shortened(args)...)}
}

// shortened returns args with each text longer than maxQuoted cut to its
// first 80 bytes and its length.
func shortened(args []any) []any {
	var out []any
	for i, a := range args {
		if s, ok := a.(string); ok && len(s) > maxQuoted {
			if out == nil {
				out = slices.Clone(args)
			}
			out[i] = abbreviate(s) + fmt.Sprintf(" (%d bytes)", len(s))
		}
	}
	if out == nil {
		return args
	}
	return out
}

// maxQuoted is the longest text an error quotes whole.
const maxQuoted = 200

// Code returns the code of the first *Error in err's chain, CodeInternal for
// any other non-nil error, and "" for nil.
func Code(err error) ErrorCode {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}
