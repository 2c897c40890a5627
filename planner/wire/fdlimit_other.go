//go:build !unix

package wire

import "errors"

// openFileLimit: no limit is known here.
func openFileLimit() (uint64, bool) { return 0, false }

// setOpenFileLimit: there is no limit to set here.
func setOpenFileLimit(uint64) error {
	return errors.New("lakesql: --open-files-limit is not supported on this system")
}
