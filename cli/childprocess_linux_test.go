package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSimulatePartsDieWithTheirParent kills a simulation whose parts run in
// child processes (kill -9: it cannot stop them itself) and checks that
// its children die with it.
func TestSimulatePartsDieWithTheirParent(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "simulate", "--origins", "40000", "--days", "60", "--visit-types", "git,hg",
		"--out", t.TempDir())
	cmd.Env = childrenEnv(exe).Environ
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	var children []int
	require.Eventually(t, func() bool {
		children = childrenOf(t, cmd.Process.Pid)
		return len(children) == 2
	}, 20*time.Second, 10*time.Millisecond, "the simulation's two parts never ran in two child processes")
	t.Cleanup(func() {
		for _, pid := range children {
			if running(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.Eventually(t, func() bool {
		for _, pid := range children {
			if running(pid) {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "a part outlived its parent: %v", children)
}

// childrenOf returns the processes whose parent is pid, from /proc.
func childrenOf(t *testing.T, pid int) []int {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	require.NoError(t, err)
	var out []int
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // ended since
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			child, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(path, "/proc/"), "/stat"))
			out = append(out, child)
		}
	}
	return out
}

// running reports whether process pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}
