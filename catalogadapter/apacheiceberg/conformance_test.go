package apacheiceberg

import (
	"context"
	"testing"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/internal/icebergtest"
)

// TestConformance runs the contract's suite on tables of the local SQLite
// catalog.
func TestConformance(t *testing.T) {
	dirs := map[*testing.T]string{}
	providertest.Run(t, func(t *testing.T, def catalogadapter.TableDef) (catalogadapter.Provider, catalogadapter.TableIdent) {
		dir := t.TempDir()
		p := openProvider(t, dir)
		if err := p.CreateTable(context.Background(), ordersID, def); err != nil {
			t.Fatal(err)
		}
		dirs[t] = dir
		return p, ordersID
	}, providertest.Options{
		CreatedVersion: -1, // no snapshot until the first commit
		StoredFiles: func(t *testing.T, id catalogadapter.TableIdent) []string {
			return icebergtest.Lake{Dir: dirs[t]}.StoredFiles(t, id)
		},
		Missing: func(id catalogadapter.TableIdent) catalogadapter.TableIdent {
			return catalogadapter.TableIdent{Namespace: id.Namespace, Name: "missing"}
		},
		// An Iceberg table lives in a namespace, under a name without dots.
		Invalid: []catalogadapter.TableIdent{
			{Name: "orders"},
			{Namespace: []string{"db"}, Name: "a.b"},
		},
	})
}
