//go:build !linux

package s3test

import "os/exec"

// setProcAttr does nothing off Linux, which has no parent-death signal; a
// test binary killed by its timeout may leave its server running there.
func setProcAttr(*exec.Cmd) {}

// xattrsWork says no off Linux: sidecar metadata works everywhere, and
// these tests run on Linux in CI.
func xattrsWork(string) bool { return false }
