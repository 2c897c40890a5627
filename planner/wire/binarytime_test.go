package wire

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"testing"
	"time"
)

// binaryTimeValues are the values the binary protocol must carry exactly:
// fractions with leading zeros, and years below 1000.
var binaryTimeValues = []string{
	"2024-05-06 07:08:09.000001",
	"2024-05-06 07:08:09.050000",
	"2024-05-06 07:08:09.005000",
	"2024-05-06 07:08:09.500000",
	"2024-05-06 07:08:09.123456",
	"2024-05-06 07:08:09.000000",
	"0001-01-01 00:00:00.000001",
	"0500-06-15 10:20:30.000000",
	"0999-12-31 23:59:59.999999",
	"9999-12-31 23:59:59.999999",
}

const timeLayout = "2006-01-02 15:04:05.000000"

// stmtPrepare prepares query with COM_STMT_PREPARE and returns its id.
func (rc *rawConn) stmtPrepare(query string) (uint32, error) {
	rc.t.Helper()
	p, err := rc.command(append([]byte{0x16}, query...))
	if err != nil {
		return 0, err
	}
	if e, ok := parseErr(p); ok {
		return 0, fmt.Errorf("error %d (%s): %s", e.code, e.state, e.msg)
	}
	if len(p) < 12 || p[0] != 0 {
		return 0, fmt.Errorf("not a prepare OK: %s", describe(p))
	}
	id := binary.LittleEndian.Uint32(p[1:])
	cols, params := binary.LittleEndian.Uint16(p[5:]), binary.LittleEndian.Uint16(p[7:])
	for _, n := range []uint16{params, cols} {
		if n == 0 {
			continue
		}
		for i := 0; i <= int(n); i++ { // the definitions, then an EOF
			if _, _, err := rc.read(); err != nil {
				return 0, err
			}
		}
	}
	return id, nil
}

// binaryParam is one COM_STMT_EXECUTE parameter: its type and its value
// in the binary protocol's encoding.
type binaryParam struct {
	typ   byte
	value []byte
}

func longlongParam(v int64) binaryParam {
	return binaryParam{0x08, binary.LittleEndian.AppendUint64(nil, uint64(v))}
}

// timeParam encodes t as a binary DATETIME (0x0c), TIMESTAMP (0x07) or DATE (0x0a).
func timeParam(typ byte, t time.Time) binaryParam {
	v := binary.LittleEndian.AppendUint16(nil, uint16(t.Year()))
	v = append(v, byte(t.Month()), byte(t.Day()))
	if typ != 0x0a {
		v = append(v, byte(t.Hour()), byte(t.Minute()), byte(t.Second()))
		v = binary.LittleEndian.AppendUint32(v, uint32(t.Nanosecond()/1000))
	}
	return binaryParam{typ, append([]byte{byte(len(v))}, v...)}
}

// stmtExecuteOK runs statement id with params and expects an OK.
func (rc *rawConn) stmtExecuteOK(id uint32, params ...binaryParam) error {
	rc.t.Helper()
	p := []byte{0x17}
	p = binary.LittleEndian.AppendUint32(p, id)
	p = append(p, 0)
	p = binary.LittleEndian.AppendUint32(p, 1)
	p = append(p, make([]byte, (len(params)+7)/8)...) // no NULLs
	p = append(p, 1)
	for _, x := range params {
		p = append(p, x.typ, 0)
	}
	for _, x := range params {
		p = append(p, x.value...)
	}
	resp, err := rc.command(p)
	if err != nil {
		return err
	}
	_, err = parseOK(resp)
	return err
}

// DATETIME(6), TIMESTAMP(6) and DATE go through the binary protocol
// exactly, both ways: as typed parameters of COM_STMT_EXECUTE (as mysql2,
// the Node mariadb connector and JDBC send them), as go-sql-driver's
// time.Time parameters, and in binary result rows.
func TestBinaryProtocolTimesExact(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK bt INTO DELTA 'bt' (id BIGINT NOT NULL, d DATETIME(6), ts TIMESTAMP(6), dd DATE, PRIMARY KEY (id))")

	want := map[int64]time.Time{}
	rc := rawLogin(t, ts.addr, testPassword)
	full, err := rc.stmtPrepare("INSERT INTO bt VALUES (?, ?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	dateOnly, err := rc.stmtPrepare("INSERT INTO bt (id, d, dd) VALUES (?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := sql.Open("mysql", dsn(ts.addr, testPassword)+"&parseTime=true&interpolateParams=false")
	if err != nil {
		t.Fatal(err)
	}
	defer bin.Close()
	for i, s := range binaryTimeValues {
		v, err := time.Parse(timeLayout, s)
		if err != nil {
			t.Fatal(err)
		}
		id := int64(i + 1)
		want[id], want[id+100] = v, v
		// TIMESTAMP's range is another matter (MySQL's 1970-2038); the
		// encoding is the same.
		if v.Year() >= 1971 && v.Year() <= 2037 {
			err = rc.stmtExecuteOK(full, longlongParam(id), timeParam(0x0c, v), timeParam(0x07, v), timeParam(0x0a, v))
		} else {
			err = rc.stmtExecuteOK(dateOnly, longlongParam(id), timeParam(0x0c, v), timeParam(0x0a, v))
		}
		if err != nil {
			t.Errorf("binary parameter %s: %v", s, err)
		}
		if _, err := bin.Exec("INSERT INTO bt (id, d, dd) VALUES (?, ?, ?)", id+100, v, v); err != nil {
			t.Errorf("go-sql-driver parameter %s: %v", s, err)
		}
	}

	// The text protocol shows what was stored.
	rows, err := db.Query("SELECT id, DATE_FORMAT(d, '%Y-%m-%d %H:%i:%s.%f'), DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s.%f'), DATE_FORMAT(dd, '%Y-%m-%d') FROM bt ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for rows.Next() {
		var id int64
		var d, tsv, dd sql.NullString
		if err := rows.Scan(&id, &d, &tsv, &dd); err != nil {
			t.Fatal(err)
		}
		seen++
		w := want[id]
		if d.String != w.Format(timeLayout) {
			t.Errorf("row %d: DATETIME stored as %q, want %q", id, d.String, w.Format(timeLayout))
		}
		if tsv.Valid && tsv.String != w.Format(timeLayout) {
			t.Errorf("row %d: TIMESTAMP stored as %q, want %q", id, tsv.String, w.Format(timeLayout))
		}
		if dd.String != w.Format("2006-01-02") {
			t.Errorf("row %d: DATE stored as %q, want %q", id, dd.String, w.Format("2006-01-02"))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen != len(want) {
		t.Errorf("%d rows, want %d", seen, len(want))
	}

	// Binary result rows (a prepared SELECT) carry the exact values.
	for id, w := range want {
		var d time.Time
		var tsv, dd sql.NullTime
		if err := bin.QueryRow("SELECT d, ts, dd FROM bt WHERE id = ?", id).Scan(&d, &tsv, &dd); err != nil {
			t.Errorf("row %d: %v", id, err)
			continue
		}
		if !d.Equal(w) {
			t.Errorf("row %d: binary DATETIME %s, want %s", id, d.Format(timeLayout), w.Format(timeLayout))
		}
		if tsv.Valid && !tsv.Time.Equal(w) {
			t.Errorf("row %d: binary TIMESTAMP %s, want %s", id, tsv.Time.Format(timeLayout), w.Format(timeLayout))
		}
		if wd := w.Truncate(24 * time.Hour); !dd.Valid || !dd.Time.Equal(time.Date(w.Year(), w.Month(), w.Day(), 0, 0, 0, 0, time.UTC)) {
			t.Errorf("row %d: binary DATE %v, want %s", id, dd, wd.Format("2006-01-02"))
		}
	}
}
