package cli

import "syscall"

// childAttr has the kernel kill a child process when revisit, its parent,
// dies, even by kill -9: a part left running would compute for nothing.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
