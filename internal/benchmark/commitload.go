package benchmark

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The commit loads of the concurrent-commits and small-batches workloads,
// shared by lakesql and MariaDB so that both servers get the very same
// statements in the same order from the same client.

// openConns opens n connections of db, held for the workload's life so
// that no run pays a connection set-up.
func openConns(ctx context.Context, db *sql.DB, n int) ([]*sql.Conn, error) {
	conns := make([]*sql.Conn, 0, n)
	for range n {
		c, err := db.Conn(ctx)
		if err != nil {
			closeConns(conns)
			return nil, fmt.Errorf("connection %d of %d: %w", len(conns)+1, n, err)
		}
		conns = append(conns, c)
	}
	return conns, nil
}

func closeConns(conns []*sql.Conn) error {
	var errs []error
	for _, c := range conns {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// autocommitInserts makes n single-row autocommit INSERTs into table over
// all conns at once, ids 0 to n-1 handed out from one counter so that the
// faster connections take more, and returns the wall time from the first
// INSERT sent to the last acknowledged and each INSERT's latency. The
// first failure stops every connection.
func autocommitInserts(ctx context.Context, conns []*sql.Conn, table string, n int) (time.Duration, []time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lat := make([]time.Duration, n)
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		firstErr error
		once     sync.Once
	)
	start := time.Now()
	for _, c := range conns {
		wg.Go(func() {
			for {
				id := next.Add(1) - 1
				if id >= int64(n) || ctx.Err() != nil {
					return
				}
				q := "INSERT INTO " + table + " VALUES " + valuesTuple(id)
				t := time.Now()
				if _, err := c.ExecContext(ctx, q); err != nil {
					once.Do(func() { firstErr = fmt.Errorf("autocommit INSERT of id %d: %w", id, err) })
					cancel()
					return
				}
				lat[id] = time.Since(t)
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	if firstErr != nil {
		return 0, nil, firstErr
	}
	return wall, lat, nil
}

// smallBatchRows is the rows of one small-batches transaction.
const smallBatchRows = 10

// smallBatches inserts n rows (ids 0 to n-1) over conn as transactions of
// smallBatchRows rows, each BEGIN, one INSERT of all its rows, COMMIT,
// and returns the whole time and each transaction's latency.
func smallBatches(ctx context.Context, conn *sql.Conn, table string, n int) (time.Duration, []time.Duration, error) {
	var lat []time.Duration
	var sb strings.Builder
	start := time.Now()
	for first := 0; first < n; first += smallBatchRows {
		sb.Reset()
		sb.WriteString("INSERT INTO " + table + " VALUES ")
		last := min(n, first+smallBatchRows)
		for id := first; id < last; id++ {
			if id > first {
				sb.WriteByte(',')
			}
			sb.WriteString(valuesTuple(int64(id)))
		}
		t := time.Now()
		if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
			return 0, nil, fmt.Errorf("BEGIN of rows %d to %d: %w", first, last-1, err)
		}
		if _, err := conn.ExecContext(ctx, sb.String()); err != nil {
			conn.ExecContext(ctx, "ROLLBACK")
			return 0, nil, fmt.Errorf("INSERT of rows %d to %d: %w", first, last-1, err)
		}
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			return 0, nil, fmt.Errorf("COMMIT of rows %d to %d: %w", first, last-1, err)
		}
		lat = append(lat, time.Since(t))
	}
	return time.Since(start), lat, nil
}

// checkRows checks that table holds n rows with n distinct ids: no
// acknowledged commit lost, none applied twice.
func checkRows(ctx context.Context, conn *sql.Conn, table string, n int) error {
	var count, distinct int64
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT id) FROM "+table).Scan(&count, &distinct); err != nil {
		return fmt.Errorf("count rows of %s: %w", table, err)
	}
	if count != int64(n) || distinct != int64(n) {
		return fmt.Errorf("%s holds %d rows with %d distinct ids, want %d of each", table, count, distinct, n)
	}
	return nil
}

// commitFigures are the latency quantiles of a load's commits.
func commitFigures(lat []time.Duration) map[string]float64 {
	return map[string]float64{"p50_ms": ms(quantile(lat, .50)), "p99_ms": ms(quantile(lat, .99))}
}

// tenthsFigures are the mean latencies of the first and the last tenth of
// a load's commits, in the order they were made: a last tenth slower than
// the first says the cost of a commit grows with the table's history.
func tenthsFigures(lat []time.Duration) map[string]float64 {
	k := len(lat) / 10
	if k == 0 {
		return nil
	}
	mean := func(ds []time.Duration) float64 {
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		return ms(sum) / float64(len(ds))
	}
	return map[string]float64{"first_tenth_ms": mean(lat[:k]), "last_tenth_ms": mean(lat[len(lat)-k:])}
}
