package swhrpc

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/kit/access"
	"github.com/revisit-sched/revisit/swhwire"
)

// Errors reach the client as the body swh-core's server writes: a plain
// map {type, module, args, message, traceback}. The client raises the
// scheduler's exceptions (SchedulerException, StaleData, UnknownPolicy) by
// type and args from a 4xx, retries a 503, and raises a generic error for
// the others.

// Modules of the exception types the client knows.
const (
	moduleScheduler = "swh.scheduler.exc"
	moduleHTTP      = "werkzeug.exceptions"
)

// rpcError is an error response: its status and its body.
type rpcError struct {
	status int
	exc    swhwire.Exception
}

func (e *rpcError) Error() string { return e.exc.Message }

// schedulerError is a 400 with one of the scheduler's exceptions; its args
// are the message alone, as the exceptions' constructors take it.
func schedulerError(typ, message string) *rpcError {
	return &rpcError{status: http.StatusBadRequest,
		exc: swhwire.Exception{Type: typ, Module: moduleScheduler, Args: []any{message}, Message: message}}
}

// httpError is an error of the transport, named as the HTTP exception of
// its status.
func httpError(status int, format string, args ...any) *rpcError {
	message := fmt.Sprintf(format, args...)
	return &rpcError{status: status, exc: swhwire.Exception{Type: httpExceptionTypes[status], Module: moduleHTTP,
		Args: []any{message}, Message: message}}
}

// httpExceptionTypes name the exceptions of HTTP statuses.
var httpExceptionTypes = map[int]string{
	http.StatusUnauthorized:          "Unauthorized",
	http.StatusForbidden:             "Forbidden",
	http.StatusNotFound:              "NotFound",
	http.StatusMethodNotAllowed:      "MethodNotAllowed",
	http.StatusRequestEntityTooLarge: "RequestEntityTooLarge",
	http.StatusUnsupportedMediaType:  "UnsupportedMediaType",
	http.StatusInternalServerError:   "InternalServerError",
	http.StatusServiceUnavailable:    "ServiceUnavailable",
}

// The args of StaleData, the exception the client's lister code expects
// when an update lost the optimistic lock.
const staleDataMessage = "Stale data; Lister state not updated"

// unknownPolicy is the UnknownPolicy error of a policy name.
func unknownPolicy(name string) *rpcError {
	return schedulerError("UnknownPolicy", "Unknown scheduling policy "+name)
}

// toRPCError maps an error of a call to its response: revisit's codes to
// the scheduler's exceptions, unavailable to 503 (which the client
// retries), anything else to a 500 whose details only the log sees.
func toRPCError(err error, log *slog.Logger, path string) *rpcError {
	var re *rpcError
	if errors.As(err, &re) {
		return re
	}
	var e *revisit.Error
	if !errors.As(err, &e) {
		e = &revisit.Error{Code: revisit.CodeInternal}
	}
	switch e.Code {
	case revisit.CodeStaleData:
		return schedulerError("StaleData", staleDataMessage)
	case revisit.CodeUnknownPolicy:
		return schedulerError("UnknownPolicy", e.Error())
	case revisit.CodeInvalid, revisit.CodeNotFound, revisit.CodeConflict:
		return schedulerError("SchedulerException", e.Error())
	case revisit.CodeUnavailable:
		return httpError(http.StatusServiceUnavailable, "%s", e.Error())
	case access.CodeUnauthorized:
		return httpError(http.StatusUnauthorized, "%s", e.Message)
	case access.CodeForbidden:
		return httpError(http.StatusForbidden, "%s", e.Message)
	}
	log.Error("swhrpc: internal error", "path", path, "err", err)
	return httpError(http.StatusInternalServerError, "internal error")
}

// renamed is err with the start of its field replaced: the stores name
// the elements of a batch as they call it (origins[3].url), the RPC as its
// parameter (listed_origins[3].url).
func renamed(err error, from, to string) error {
	var e *revisit.Error
	if !errors.As(err, &e) || !strings.HasPrefix(e.Field, from) {
		return err
	}
	field := strings.TrimPrefix(to+strings.TrimPrefix(e.Field, from), ".")
	return &revisit.Error{Code: e.Code, Message: e.Message, Field: field}
}
