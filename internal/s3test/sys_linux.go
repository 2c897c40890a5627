package s3test

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcAttr asks the kernel to SIGKILL the server when the test process
// dies, so that a test binary killed by its timeout (which skips Cleanup)
// leaves no server behind. Caveat: the signal follows the OS thread that
// started the child, and Go only ends threads that exit while locked by
// LockOSThread, which the tests here do not do.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// xattrsWork reports whether files in dir take user xattrs, which
// versitygw's default metadata store needs (tmpfs before Linux 6.6 and
// some overlay setups do not). It writes one, as reading is not proof.
func xattrsWork(dir string) bool {
	f, err := os.CreateTemp(dir, ".xattr-probe-")
	if err != nil {
		return false
	}
	name := f.Name()
	f.Close()
	defer os.Remove(name)
	if err := syscall.Setxattr(name, "user.lakesql.probe", []byte("1"), 0); err != nil {
		return false
	}
	buf := make([]byte, 8)
	n, err := syscall.Getxattr(name, "user.lakesql.probe", buf)
	return err == nil && n == 1
}
