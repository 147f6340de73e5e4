// Package e2e holds end-to-end tests of revisit against its real peers:
// PostgreSQL, RabbitMQ, Python Celery workers, and the revisit binary run as
// a subprocess (killed, interrupted, restarted). It has no code of its own.
package e2e
