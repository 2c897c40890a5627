package benchmark

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"

	sqle "github.com/dolthub/go-mysql-server"
	gmsserver "github.com/dolthub/go-mysql-server/server"
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

// The reference of the wire workloads: a plain go-mysql-server (the
// version lakesql is built on) serving one database, lakesql, with one
// table whose column types are those lakesql shows for a sink of
// rowSchema, and which counts the rows it is handed and keeps none.
// Parsing, analysis, value conversion and the wire are all it costs: the
// front end's ceiling.

// discardDB is the reference's database with its one table.
type discardDB struct{ t *discardTable }

func (d *discardDB) Name() string { return "lakesql" }

func (d *discardDB) GetTableInsensitive(_ *gms.Context, name string) (gms.Table, bool, error) {
	if strings.EqualFold(name, d.t.name) {
		return d.t, true, nil
	}
	return nil, false, nil
}

func (d *discardDB) GetTableNames(*gms.Context) ([]string, error) { return []string{d.t.name}, nil }

type discardProvider struct{ db *discardDB }

func (p *discardProvider) Database(_ *gms.Context, name string) (gms.Database, error) {
	if strings.EqualFold(name, p.db.Name()) {
		return p.db, nil
	}
	return nil, gms.ErrDatabaseNotFound.New(name)
}

func (p *discardProvider) HasDatabase(_ *gms.Context, name string) bool {
	return strings.EqualFold(name, p.db.Name())
}

func (p *discardProvider) AllDatabases(*gms.Context) []gms.Database { return []gms.Database{p.db} }

// discardTable counts inserted rows and keeps none.
type discardTable struct {
	name   string
	schema gms.Schema
	rows   atomic.Int64
}

var _ gms.InsertableTable = (*discardTable)(nil)

func newDiscardTable(name string) *discardTable {
	col := func(col string, t gms.Type, nullable bool) *gms.Column {
		return &gms.Column{Name: col, Type: t, Nullable: nullable, Source: name, DatabaseSource: "lakesql"}
	}
	return &discardTable{name: name, schema: gms.Schema{
		col("id", types.Int64, false),
		col("amount", types.Float64, true),
		col("region", types.LongText, true),
		col("ts", types.TimestampMaxPrecision, true),
	}}
}

func (t *discardTable) Name() string               { return t.name }
func (t *discardTable) String() string             { return t.name }
func (t *discardTable) Schema() gms.Schema         { return t.schema }
func (t *discardTable) Collation() gms.CollationID { return gms.Collation_Default }

type discardPartition struct{}

func (discardPartition) Key() []byte { return []byte("all") }

func (t *discardTable) Partitions(*gms.Context) (gms.PartitionIter, error) {
	return gms.PartitionsToPartitionIter(discardPartition{}), nil
}

func (t *discardTable) PartitionRows(*gms.Context, gms.Partition) (gms.RowIter, error) {
	return gms.RowsToRowIter(), nil
}

func (t *discardTable) Inserter(*gms.Context) gms.RowInserter { return discardInserter{t} }

type discardInserter struct{ t *discardTable }

func (discardInserter) StatementBegin(*gms.Context)              {}
func (discardInserter) DiscardChanges(*gms.Context, error) error { return nil }
func (discardInserter) StatementComplete(*gms.Context) error     { return nil }
func (discardInserter) Close(*gms.Context) error                 { return nil }
func (i discardInserter) Insert(_ *gms.Context, _ gms.Row) error { i.t.rows.Add(1); return nil }

// discardServer is the reference server on a free loopback port, with one
// client connected.
type discardServer struct {
	table  *discardTable
	eng    *sqle.Engine
	srv    *gmsserver.Server
	served chan error
	*wireClient
}

func startDiscard(ctx context.Context, table string) (*discardServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &discardServer{table: newDiscardTable(table), served: make(chan error, 1)}
	s.eng = sqle.NewDefault(&discardProvider{db: &discardDB{t: s.table}})
	build := func(_ context.Context, c *mysql.Conn, addr string) (gms.Session, error) {
		client := gms.Client{User: c.User, Capabilities: c.Capabilities}
		return gms.NewBaseSessionWithClientServer(addr, client, c.ConnectionID), nil
	}
	s.srv, err = gmsserver.NewServer(gmsserver.Config{Protocol: "tcp", Address: l.Addr().String(), Listener: l},
		s.eng, gms.NewContext, build, nil)
	if err != nil {
		l.Close()
		s.eng.Close()
		return nil, fmt.Errorf("start reference server: %w", err)
	}
	serveLabeled(ctx, "reference", s.srv.Start, s.served)
	if s.wireClient, err = dialWire(ctx, fmt.Sprintf("root:@tcp(%s)/lakesql?timeout=30s", l.Addr())); err != nil {
		s.Close()
		return nil, fmt.Errorf("reference server: %w", err)
	}
	return s, nil
}

// Close disconnects the client and stops the server.
func (s *discardServer) Close() error {
	var errs []error
	if s.wireClient != nil {
		errs = append(errs, s.wireClient.Close())
	}
	errs = append(errs, s.srv.Close())
	<-s.served
	// The engine cancels its background threads' context on Close and
	// reports that as its error: not a failure.
	if err := s.eng.Close(); !errors.Is(err, context.Canceled) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
