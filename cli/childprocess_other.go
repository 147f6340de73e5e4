//go:build !linux

package cli

import "syscall"

// childAttr is nil where the kernel cannot tie a child's life to its
// parent's: a part outlives a parent killed without notice until it ends.
func childAttr() *syscall.SysProcAttr { return nil }
