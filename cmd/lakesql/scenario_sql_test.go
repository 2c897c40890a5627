package main

// Sessions through database/sql: go-sql-driver/mysql over the MySQL wire,
// or lakesql's embedded driver. One *sql.Conn is one session.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	vmysql "github.com/dolthub/vitess/go/mysql"
	gomysql "github.com/go-sql-driver/mysql"

	_ "github.com/lakesql/lakesql/driver"
)

// sqlSession is one *sql.Conn of a *sql.DB whose idle connections are not
// kept (SetMaxIdleConns(0)), so Close really ends the session.
type sqlSession struct {
	conn *sql.Conn
}

func openSQLSession(ctx context.Context, db *sql.DB) (*sqlSession, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, asSQLError(err)
	}
	if err := conn.PingContext(ctx); err != nil {
		conn.Close()
		return nil, asSQLError(err)
	}
	return &sqlSession{conn: conn}, nil
}

func (s *sqlSession) Exec(ctx context.Context, query string) (int64, error) {
	res, err := s.conn.ExecContext(ctx, query)
	if err != nil {
		return 0, asSQLError(err)
	}
	return res.RowsAffected()
}

func (s *sqlSession) Query(ctx context.Context, query string) ([][]string, error) {
	rows, err := s.conn.QueryContext(ctx, query)
	if err != nil {
		return nil, asSQLError(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	out := [][]string{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = valueText(v)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, asSQLError(err)
	}
	return out, nil
}

func (s *sqlSession) Close() error { return s.conn.Close() }

// valueText renders a database/sql value the way the MySQL text protocol
// (and so the mariadb client) shows it.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(x)
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case time.Time:
		return strings.TrimSuffix(x.UTC().Format("2006-01-02 15:04:05.999999"), ".")
	default:
		return fmt.Sprint(x)
	}
}

// asSQLError gives a driver's error its MySQL code: go-sql-driver's
// *mysql.MySQLError, or the embedded driver's error (which carries a
// vitess *mysql.SQLError). Other errors are returned as they are.
func asSQLError(err error) error {
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		state := string(me.SQLState[:])
		if me.SQLState == [5]byte{} {
			state = ""
		}
		return &sqlError{Code: int(me.Number), State: state, Message: me.Message}
	}
	var ve *vmysql.SQLError
	if errors.As(err, &ve) {
		return &sqlError{Code: ve.Num, State: ve.State, Message: ve.Message}
	}
	return err
}
