// Package holder names a process in the leases it holds, as
// host:pid:token, and tells from such a name whether the process is gone,
// so that a lease whose holder died on this host is taken over at once
// instead of when it expires.
package holder

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/revisit-sched/revisit"
)

// New returns a name for this process: its host, its PID and a random
// token that tells apart the processes of a host reusing a PID.
func New() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s:%d:%04x", host, os.Getpid(), rand.N(0x10000))
}

// Gone reports whether name, as New writes it, stands for a process of
// this host that no longer runs. A name of another host, or not written
// by New, is never gone: only its lease's expiry frees it. Processes
// sharing a host name across PID namespaces (containers with the host's
// name) must be told apart by their owner names, since they cannot see
// each other's PIDs.
func Gone(name string) bool {
	host, pid, ok := parse(name)
	if !ok || pid == os.Getpid() {
		return false
	}
	self, err := os.Hostname()
	if err != nil || host != self {
		return false
	}
	return !alive(pid)
}

// parse splits a name written by New into its host and PID.
func parse(name string) (host string, pid int, ok bool) {
	parts := strings.Split(name, ":")
	if len(parts) != 3 || parts[0] == "" {
		return "", 0, false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return "", 0, false
	}
	return parts[0], pid, true
}

// Acquire takes a lease for owner through acquire, which takes or renews
// it unless another holder keeps it unexpired, and takes it over from
// that holder too when given its name. When the lease stays with a
// holder that is gone, Acquire asks again, taking it over from that
// holder only (a holder that renewed meanwhile keeps it).
func Acquire(owner string, acquire func(takeOverFrom string) (revisit.Lease, error)) (revisit.Lease, error) {
	l, err := acquire("")
	if err != nil || l.Owner == owner || !Gone(l.Owner) {
		return l, err
	}
	return acquire(l.Owner)
}
