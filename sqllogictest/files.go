package sqllogictest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Expand turns the paths given to `lakesql test` into files: a file stays
// itself (whatever its name), a folder becomes every *.slt file under it,
// recursively, in lexical order. A folder without any is an error, so a
// mistyped path never passes silently.
func Expand(paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, errors.New("no files or folders given")
	}
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && filepath.Ext(path) == ".slt" {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("no .slt files under %s", p)
		}
		slices.Sort(found)
		out = append(out, found...)
	}
	return out, nil
}
