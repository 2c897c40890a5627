package main

import (
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/lakesql/lakesql/internal/stalltest"
)

// Probes of issue 15's items 7 (the bound on open sink buffers) and 8 (an
// Iceberg catalog that never answers).

// sinkioSilentCatalog is a REST catalog that hangs (it accepts, reads and
// never answers) until the probe ends.
func sinkioSilentCatalog(h *hostileEnv) *stalltest.Silent {
	s, err := stalltest.NewSilent()
	if err != nil {
		h.t.Fatal(err)
	}
	h.closers = append(h.closers, s.Close)
	return s
}

// sinkioTrickleCatalog is a REST catalog whose answers never end, until
// the probe ends.
func sinkioTrickleCatalog(h *hostileEnv) string {
	c, err := stalltest.NewTrickle()
	if err != nil {
		h.t.Fatal(err)
	}
	h.closers = append(h.closers, c.Close)
	return c.URI()
}

func sinkioRestSink(name, uri string) string {
	return fmt.Sprintf("CREATE SINK %s INTO ICEBERG 'sinkio.%s' (id BIGINT NOT NULL) WITH (catalog.type = 'rest', catalog.uri = '%s')", name, name, uri)
}

// sinkioServe starts a server of its own with extra flags and returns a
// pool on it (closed after the probe).
func sinkioServe(h *hostileEnv, flags ...string) *sql.DB {
	p := h.serve(nil, append([]string{"--listen", "127.0.0.1:0", "--data", h.t.TempDir()}, flags...)...)
	db, err := sql.Open("mysql", fmt.Sprintf("root:%s@tcp(%s)/lakesql?timeout=20s", hostilePassword, p.addr))
	if err != nil {
		h.t.Fatal(err)
	}
	h.closers = append(h.closers, func() { db.Close() })
	return db
}

// sinkioHungCreate starts CREATE SINK name on a silent REST catalog on the
// suite's server and returns once the catalog has the request; done gets
// the statement's outcome when the catalog hangs up.
func sinkioHungCreate(h *hostileEnv, name string) (silent *stalltest.Silent, done chan error) {
	silent = sinkioSilentCatalog(h)
	done = make(chan error, 1)
	go func() {
		_, err := h.db.ExecContext(h.ctx, sinkioRestSink(name, silent.URI()))
		done <- err
	}()
	select {
	case <-silent.Requested():
	case <-h.ctx.Done():
	}
	return silent, done
}

// sinkioOpenTables reads Open_tables.
func sinkioOpenTables(h *hostileEnv, db *sql.DB) (int, error) {
	var name, v string
	if err := db.QueryRowContext(h.ctx, "SHOW GLOBAL STATUS LIKE 'Open_tables'").Scan(&name, &v); err != nil {
		return 0, err
	}
	return strconv.Atoi(v)
}

func init() {
	registerHostile(
		hostileProbe{name: "catalog/rest-silent-timeout", want: 1429, run: func(h *hostileEnv) error {
			db := sinkioServe(h, "--catalog-timeout", "300ms")
			_, err := db.ExecContext(h.ctx, sinkioRestSink("silent", sinkioSilentCatalog(h).URI()))
			return err
		}},
		hostileProbe{name: "catalog/rest-trickle-timeout", want: 1429, run: func(h *hostileEnv) error {
			db := sinkioServe(h, "--catalog-timeout", "300ms")
			_, err := db.ExecContext(h.ctx, sinkioRestSink("trickle", sinkioTrickleCatalog(h)))
			return err
		}},
		// While a CREATE SINK waits on a catalog that never answers, an
		// Iceberg sink on the default catalog is created, written and
		// read, and SHOW SINK STATUS answers, all before it ends.
		hostileProbe{name: "catalog/rest-hang-blocks-no-one", want: 0, run: func(h *hostileEnv) error {
			silent, done := sinkioHungCreate(h, "sinkio_hung")
			steps := []string{
				"CREATE SINK sinkio_ice INTO ICEBERG 'sinkio.ice' (id BIGINT NOT NULL)",
				"INSERT INTO sinkio_ice VALUES (1), (2)",
			}
			for _, q := range steps {
				if err := h.exec(q); err != nil {
					return err
				}
			}
			rows, err := h.query("SELECT count(*) FROM sinkio_ice")
			if err != nil {
				return err
			}
			if rows[0][0] != "2" {
				return h.wrong("sinkio_ice holds %s rows, want 2", rows[0][0])
			}
			status, err := h.query("SHOW SINK STATUS")
			if err != nil {
				return err
			}
			for _, r := range status {
				if r[0] == "sinkio_hung" {
					return h.wrong("SHOW SINK STATUS lists the sink still being created")
				}
			}
			select {
			case err := <-done:
				return h.wrong("the CREATE SINK on the silent catalog ended first: %v", err)
			default:
			}
			silent.Close()
			if err := <-done; err == nil {
				return h.wrong("CREATE SINK on a catalog that hung up succeeded")
			}
			return h.exec("DROP SINK sinkio_ice")
		}},
		hostileProbe{name: "catalog/create-while-creating", want: 1050, run: func(h *hostileEnv) error {
			silent, done := sinkioHungCreate(h, "sinkio_twice")
			err := h.exec("CREATE SINK IF NOT EXISTS sinkio_twice INTO ICEBERG 'sinkio.twice' (id BIGINT NOT NULL)")
			silent.Close()
			<-done
			return err
		}},
		// 40 sinks with room for 4 buffers: Open_tables stays within 4,
		// and every sink writes, reads and skips a replay afterwards.
		hostileProbe{name: "sinks/open-buffers-bounded", want: 0, timeout: 3 * time.Minute, run: func(h *hostileEnv) error {
			const sinks, bound = 40, 4
			db := sinkioServe(h, "--max-open-sinks", strconv.Itoa(bound), "--sink-idle-timeout", "0")
			c, err := db.Conn(h.ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			within := func() error {
				n, err := sinkioOpenTables(h, db)
				if err == nil && n > bound {
					return h.wrong("Open_tables = %d, the bound is %d", n, bound)
				}
				return err
			}
			for i := range sinks {
				for _, q := range []string{
					fmt.Sprintf("CREATE SINK m%d INTO DELTA 'm%d' (id BIGINT NOT NULL)", i, i),
					"SET lakesql_epoch = 1",
					fmt.Sprintf("INSERT INTO m%d VALUES (1)", i),
				} {
					if _, err := c.ExecContext(h.ctx, q); err != nil {
						return err
					}
				}
				if err := within(); err != nil {
					return err
				}
			}
			for i := range sinks {
				if _, err := c.ExecContext(h.ctx, "SET lakesql_epoch = 1"); err != nil {
					return err
				}
				res, err := c.ExecContext(h.ctx, fmt.Sprintf("INSERT INTO m%d VALUES (99)", i))
				if err != nil {
					return err
				}
				if n, _ := res.RowsAffected(); n != 0 {
					return h.wrong("m%d: a replayed epoch affected %d rows", i, n)
				}
				var count, sum int64
				if err := c.QueryRowContext(h.ctx, fmt.Sprintf("SELECT count(*), sum(id) FROM m%d", i)).Scan(&count, &sum); err != nil {
					return err
				}
				if count != 1 || sum != 1 {
					return h.wrong("m%d holds %d rows summing to %d, want the one row 1", i, count, sum)
				}
				if err := within(); err != nil {
					return err
				}
			}
			return nil
		}},
		hostileProbe{name: "sinks/open-tables-status", want: 0, run: func(h *hostileEnv) error {
			n, err := sinkioOpenTables(h, h.db)
			if err == nil && (n < 0 || n > 128) {
				return h.wrong("Open_tables = %d, outside the default bound of 128", n)
			}
			return err
		}},
	)
}
