package planner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// LockFile is the file in the data directory an engine holds an exclusive
// lock on from Open to Close. A data directory serves one process at a
// time: its sinks' writer ids (lakesql-<name>) are per data directory, so
// two processes writing one sink under one writer id would each take the
// other's commits for replays. The lock refuses the second process
// instead. It is flock(2), released by the kernel when the process ends,
// so a crash leaves no stale lock; the file keeps the holder's pid.
const LockFile = "lakesql.lock"

// ErrDataDirInUse marks an Open refused because another engine, in this
// process or another, holds the data directory.
var ErrDataDirInUse = errors.New("data directory in use")

// dataDirLock is a held lock on a data directory.
type dataDirLock struct{ f *os.File }

// lockDataDir takes the data directory's lock, or fails at once, naming the
// holder's pid, when another engine holds it.
func lockDataDir(dir string) (*dataDirLock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lakesql: data directory lock: %w", err)
	}
	if busy, err := tryLock(f); busy || err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if busy {
			who := "another lakesql engine"
			if pid, perr := strconv.Atoi(string(bytes.TrimSpace(holder))); perr == nil {
				who = fmt.Sprintf("lakesql process %d", pid)
				if pid == os.Getpid() {
					who = fmt.Sprintf("another engine of this process (%d)", pid)
				}
			}
			return nil, fmt.Errorf("lakesql: %w: %s is held by %s (lock %s); a data directory serves one process at a time: connect to that one, or give this one a data directory of its own",
				ErrDataDirInUse, dir, who, path)
		}
		return nil, fmt.Errorf("lakesql: lock data directory %s: %w", dir, err)
	}
	// The pid is information for the message above, not the lock itself.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dataDirLock{f: f}, nil
}

// release gives the lock up; the file stays, for the next holder.
func (l *dataDirLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	return err
}
