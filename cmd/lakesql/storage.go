package main

// The object storage flags shared by the REPL, lakesql serve and lakesql
// test: --table-root LOCATION and the repeatable --storage KEY=VALUE.

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lakesql/lakesql/internal/storageloc"
)

// storageFlags is the value of the repeatable --storage KEY=VALUE flag:
// the default storage.* options of Delta sinks on object storage.
//
// Set never fails: the flag package would repeat the whole argument in its
// error, secret included. The first bad argument is kept instead and
// reported by check, which never shows a secret's value.
type storageFlags struct {
	opts map[string]string
	err  error
}

// storageUsage is the --storage flag's help text.
var storageUsage = "default option of Delta sinks on object storage, as KEY=VALUE (repeatable; a sink's WITH options win); " +
	"keys: " + strings.Join(storageloc.Keys(), ", ") +
	". Prefer the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) for credentials: command lines are visible to other users"

// tableRootUsage is the --table-root flag's help text.
const tableRootUsage = "where relative Delta sink locations go: a directory or an object storage location such as s3://bucket/prefix (default: the data directory)"

// String lists the options with secrets masked (the flag package shows it
// as a default).
func (s *storageFlags) String() string {
	if s == nil || len(s.opts) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s.opts)) {
		parts = append(parts, k+"="+storageloc.ShownValue(k, s.opts[k]))
	}
	return strings.Join(parts, ",")
}

func (s *storageFlags) Set(arg string) error {
	if s.err != nil {
		return nil
	}
	k, v, ok := strings.Cut(arg, "=")
	k = strings.TrimSpace(k)
	switch {
	case !ok || k == "":
		// The argument is not shown: it may be a bare secret.
		s.err = errors.New("--storage takes KEY=VALUE, such as storage.endpoint=http://127.0.0.1:7070")
		return nil
	case !strings.HasPrefix(k, "storage."):
		k = "storage." + k // storage.endpoint or endpoint
	}
	if err := storageloc.CheckOption(k, v); err != nil {
		s.err = fmt.Errorf("--storage: %w", err) // CheckOption masks secrets
		return nil
	}
	if prev, dup := s.opts[k]; dup && prev != v {
		s.err = fmt.Errorf("--storage: %s given twice with different values", k)
		return nil
	}
	if s.opts == nil {
		s.opts = map[string]string{}
	}
	s.opts[k] = v
	return nil
}

// check returns the error of the first bad --storage argument. Options
// without an object storage --table-root are fine: sinks may still name
// s3:// locations.
func (s *storageFlags) check() error { return s.err }

// addStorageFlags defines --table-root and --storage on fs.
func addStorageFlags(fs *flag.FlagSet, tableRoot *string, storage *storageFlags) {
	fs.StringVar(tableRoot, "table-root", "", tableRootUsage)
	fs.Var(storage, "storage", storageUsage)
}
