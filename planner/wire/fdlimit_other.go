//go:build !unix

package wire

// openFileLimit: no limit is known here.
func openFileLimit() (uint64, bool) { return 0, false }
