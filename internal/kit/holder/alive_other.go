//go:build !unix

package holder

// alive cannot tell on this system: every process is taken for alive, and
// its leases expire by themselves.
func alive(int) bool { return true }
