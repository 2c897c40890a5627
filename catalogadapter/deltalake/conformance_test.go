package deltalake

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/internal/clocktest"
)

// TestConformance runs the contract's suite on tables on the local disk.
func TestConformance(t *testing.T) {
	dir := t.TempDir()
	providertest.Run(t, func(t *testing.T, def catalogadapter.TableDef) (catalogadapter.Provider, catalogadapter.TableIdent) {
		p := New(openDB(t), testOptions(clocktest.New(t0)))
		return p, newTable(t, p, def)
	}, providertest.Options{
		CreatedVersion: 0, // creating the table writes version 0
		StoredFiles: func(t *testing.T, id catalogadapter.TableIdent) []string {
			var out []string
			filepath.WalkDir(id.Name, func(p string, d os.DirEntry, err error) error {
				switch {
				case err != nil:
				case d.IsDir() && d.Name() == "_delta_log":
					return filepath.SkipDir // checkpoints are Parquet too
				case !d.IsDir() && strings.HasSuffix(p, ".parquet"):
					out = append(out, p)
				}
				return nil
			})
			return out
		},
		Missing: func(id catalogadapter.TableIdent) catalogadapter.TableIdent {
			return catalogadapter.TableIdent{Name: filepath.Join(filepath.Dir(id.Name), "missing")}
		},
		// A path-based table is named by an absolute, clean path alone.
		Invalid: []catalogadapter.TableIdent{
			{Name: "relative/path"},
			{Name: dir + "/../x"},
			{Name: dir + "/"},
			{Name: "/"},
			{Name: dir + "/a\x00b"},
			{Catalog: "c", Name: dir},
			{Namespace: []string{"ns"}, Name: dir},
		},
	})
}
