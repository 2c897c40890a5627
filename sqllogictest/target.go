package sqllogictest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/go-sql-driver/mysql" // registers "mysql", for servers

	lakedriver "github.com/lakesql/lakesql/driver"
)

// target is the database one file runs against: a *sql.DB and one pinned
// *sql.Conn per connection label, so that each label is one session (and a
// BEGIN on it stays open until its COMMIT).
type target struct {
	driverName string
	dsn        string
	db         *sql.DB
	conns      map[string]*sql.Conn
}

// embeddedDSN opens the lakesql driver on dataDir, with sink locations
// allowed under the data directory, the file's __TEST_DIR__ and its table
// root, if it has one (else relative locations go to the data directory).
func embeddedDSN(dataDir, testDir, tableRoot string, storage map[string]string, lockWait time.Duration) string {
	v := url.Values{"allowed_roots": {dataDir, testDir}}
	if lockWait != 0 {
		v.Set("lock_wait_timeout", lockWait.String())
	}
	if tableRoot != "" {
		v.Add("allowed_roots", tableRoot)
		v.Set("table_root", tableRoot)
	}
	for k, val := range storage {
		v.Set(k, val)
	}
	return dataDir + "?" + v.Encode()
}

func openTarget(driverName, dsn string) (*target, error) {
	t := &target{driverName: driverName, dsn: dsn}
	if err := t.open(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *target) open() error {
	db, err := sql.Open(t.driverName, t.dsn)
	if err != nil {
		return fmt.Errorf("open %s database: %w", t.driverName, err)
	}
	t.db, t.conns = db, map[string]*sql.Conn{}
	return nil
}

// conn returns the session of a label, opening it on first use.
func (t *target) conn(ctx context.Context, label string) (*sql.Conn, error) {
	if c, ok := t.conns[label]; ok {
		return c, nil
	}
	c, err := t.db.Conn(ctx)
	if err != nil {
		name := label
		if name == "" {
			name = "the default connection"
		}
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	t.conns[label] = c
	return c, nil
}

// close ends every session (rolling back their open transactions) and
// closes the *sql.DB; for the embedded driver that closes the engine too,
// once no other *sql.DB in the process uses the data directory.
func (t *target) close() error {
	var errs []error
	for _, c := range t.conns {
		errs = append(errs, c.Close())
	}
	t.conns = nil
	if t.db != nil {
		errs = append(errs, t.db.Close())
		t.db = nil
	}
	return errors.Join(errs...)
}

// reopen closes everything and connects again, to dsn when not "".
func (t *target) reopen(dsn string) error {
	if err := t.close(); err != nil {
		return fmt.Errorf("close before restart: %w", err)
	}
	if dsn != "" {
		t.dsn = dsn
	}
	return t.open()
}

// errorCode is the MySQL error number of err, or 0.
func errorCode(err error) int {
	var le *lakedriver.Error
	if errors.As(err, &le) {
		return le.Code()
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return int(me.Number)
	}
	return 0
}

// errorMessage is err's message without the driver's decoration, so an
// expected message matches the same way embedded and over the wire.
func errorMessage(err error) string {
	var le *lakedriver.Error
	if errors.As(err, &le) {
		return le.SQL.Message
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Message
	}
	return err.Error()
}

// errorText is err as a report shows it: ERROR code (state): message.
func errorText(err error) string {
	var le *lakedriver.Error
	if errors.As(err, &le) {
		return fmt.Sprintf("ERROR %d (%s): %s", le.Code(), le.SQL.SQLState(), le.SQL.Message)
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprintf("ERROR %d (%s): %s", me.Number, string(me.SQLState[:]), me.Message)
	}
	return "ERROR: " + err.Error()
}
