package planner

// LOAD DATA INFILE (the server's file; LOCAL reads the client's and is
// go-mysql-server's, behind local_infile): the file is opened through
// openFile (filefuncs.go), and go-mysql-server, whose row parsing lakesql
// keeps, is given the file's resolved path, with no symlink or ".." left
// for it to follow, once it is checked to be the file that was opened.
// go-mysql-server then checks that path against secure_file_priv too (a
// process-wide setting, which the server sets to DATA/files).

import (
	"os"
	"path/filepath"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

func (s *strictBuilder) buildLoadData(ctx *gms.Context, n *plan.LoadData, row gms.Row) (gms.RowIter, error) {
	if n.Local {
		return nil, nil
	}
	e, err := sessionEngine(ctx)
	if err != nil {
		return nil, err
	}
	real, err := e.resolvedFile(n.File)
	if err != nil {
		return nil, err
	}
	if real == n.File {
		return nil, nil
	}
	resolved := *n
	resolved.File = real
	return s.build.Build(ctx, &resolved, row)
}

// resolvedFile returns the path of the file name names under DATA/files
// with every symlink resolved, after checking that it is the file os.Root
// opens for name.
func (e *Engine) resolvedFile(name string) (string, error) {
	f, err := e.openFile(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return "", errFileNotFound{name, err}
	}
	rel, err := e.filesName(name)
	if err != nil {
		return "", err
	}
	// Concatenated, not joined: Join would drop "a/.." before a symlink a
	// is followed.
	real, err := filepath.EvalSymlinks(e.filesDir() + "/" + rel)
	if err != nil {
		return "", errFileNotFound{name, err}
	}
	if st, err := os.Stat(real); err != nil || !os.SameFile(st, opened) {
		return "", refusedFile(name, "changed while it was checked")
	}
	return real, nil
}
