// Package celery encodes task messages for Python Celery workers and decodes
// the events those workers publish, as described in wire.md §1 and §3.
//
// It is pure: no network, no AMQP library. The broker package hands a
// Message's properties, headers and body to amqp091-go unchanged, and feeds
// every delivery from the events exchange to DecodeEvents.
//
// The wire format is Celery's task message protocol v2 and its event format
// (JSON serializer), as understood by Debian's Celery 5.2 / kombu 5.2. Python
// values that only exist as display strings on the wire (argsrepr, kwargsrepr,
// the result of task-succeeded) are produced by Repr and read back by
// ParsePyLiteral.
package celery
