//go:build unix

package holder

import (
	"errors"
	"syscall"
)

// alive reports whether a process of that PID exists: signal 0 checks
// without signalling, and only "no such process" means it does not (a
// process of another user answers EPERM).
func alive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
