package planner

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/s3test"
)

// lake is the versitygw server the tests of this package share.
var lake *s3test.Server

func TestMain(m *testing.M) { os.Exit(s3test.RunMain(m, &lake)) }

// TestObjectStorageSink: a Delta sink on S3 through SQL, with its storage
// options in WITH, then one placed by the engine's table root; secrets
// never shown.
func TestObjectStorageSink(t *testing.T) {
	ctx := context.Background()
	prefix := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	var with []string
	for k, v := range lake.Options() {
		with = append(with, fmt.Sprintf("%s = '%s'", k, v))
	}
	te.exec(s, fmt.Sprintf(`CREATE SINK orders INTO DELTA '%s' (id BIGINT NOT NULL, region VARCHAR(16)) WITH (%s)`,
		lake.URL(prefix+"/orders"), strings.Join(with, ", ")))
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO orders VALUES (1, 'eu'), (2, 'us')")
	te.exec(s, "INSERT INTO orders VALUES (3, 'eu')")
	te.exec(s, "COMMIT")
	if d := cmp.Diff([][]any{{int64(1), "eu"}, {int64(2), "us"}, {int64(3), "eu"}},
		te.rows(s, "SELECT id, region FROM orders ORDER BY id")); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	shown := fmt.Sprint(te.rows(s, "SHOW CREATE SINK orders"))
	if strings.Contains(shown, lake.SecretKey) || !strings.Contains(shown, "****") {
		t.Errorf("SHOW CREATE SINK shows the secret or no mask: %s", shown)
	}
	status := te.rows(s, "SHOW SINK STATUS orders")
	if len(status) != 1 || status[0][1] != "healthy" || status[0][3] != int64(1) {
		t.Errorf("status %v, want healthy at version 1", status)
	}
	// Storage options belong to object storage locations only.
	te.fails(s, `CREATE SINK local INTO DELTA 'lake/local' (id BIGINT) WITH (storage.region = 'x')`, "object storage locations")
	te.fails(s, `CREATE SINK bad INTO DELTA 's3://lake/x' (id BIGINT) WITH (storage.colour = 'x')`, "unknown storage option")
	if err := te.e.Close(); err != nil {
		t.Fatal(err)
	}

	// An engine whose table root is the bucket: relative locations land
	// there, with the engine's storage options.
	e, err := Open(ctx, Options{DataDir: t.TempDir(), TableRoot: lake.URL(prefix + "/root"), Storage: lake.Options()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	te2 := &testEngine{t: t, e: e}
	s2 := te2.session()
	te2.exec(s2, "CREATE SINK t INTO DELTA 'events' (id BIGINT NOT NULL)")
	te2.exec(s2, "INSERT INTO t VALUES (7)")
	if d := cmp.Diff([][]any{{int64(7)}}, te2.rows(s2, "SELECT id FROM t")); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	te2.fails(s2, "CREATE SINK u INTO DELTA '../outside' (id BIGINT)", "leaves the table root")
	if _, err := lake.S3Client().HeadObject(ctx, &s3.HeadObjectInput{Bucket: &lake.Bucket, Key: aws.String(prefix + "/root/events/_delta_log/00000000000000000001.json")}); err != nil {
		t.Errorf("commit 1 of the relative sink is not in the bucket: %v", err)
	}
}

// TestConflictCode: a commit that other writers kept invalidating is
// MySQL's "try restarting transaction".
func TestConflictCode(t *testing.T) {
	err := MySQLError(fmt.Errorf("commit epoch 3: %w: version 9 added data", catalogadapter.ErrConflict))
	if err.Num != 1213 || err.State != "40001" {
		t.Errorf("conflict maps to %d (%s), want 1213 (40001)", err.Num, err.State)
	}
}

// TestObjectStorageOutageStatus: while the store is down, statements fail
// and SHOW SINK STATUS says the sink is degraded and why; once it is back
// and a probe went through, the sink is healthy and nothing was lost.
func TestObjectStorageOutageStatus(t *testing.T) {
	srv := s3test.Start(t)
	e, err := Open(context.Background(), Options{DataDir: t.TempDir(), TableRoot: srv.URL("root"), Storage: srv.Options()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	te := &testEngine{t: t, e: e}
	s := te.session()
	te.exec(s, "CREATE SINK t INTO DELTA 'events' (id BIGINT NOT NULL)")
	te.exec(s, "INSERT INTO t VALUES (1)")

	srv.Kill()
	if _, err := e.Exec(context.Background(), s, "INSERT INTO t VALUES (2)"); err == nil {
		t.Fatal("an INSERT committed while the store was down")
	}
	status := te.rows(s, "SHOW SINK STATUS t")
	if len(status) != 1 || status[0][1] != "degraded" || !strings.Contains(fmt.Sprint(status[0][6]), "storage") {
		t.Fatalf("status while down: %v, want degraded with a storage reason", status)
	}

	srv.Restart(t)
	// The breaker lets a probe through after its cooldown (1 s at first).
	var lastErr error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, lastErr = e.Exec(context.Background(), s, "INSERT INTO t VALUES (3)"); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		t.Fatalf("the sink did not recover: %v", lastErr)
	}
	if status := te.rows(s, "SHOW SINK STATUS t"); status[0][1] != "healthy" || status[0][6] != nil {
		t.Errorf("status after recovery: %v", status)
	}
	if d := cmp.Diff([][]any{{int64(1)}, {int64(3)}}, te.rows(s, "SELECT id FROM t ORDER BY id")); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
}

// TestObjectStorageAllowedRoots: with an object storage root among the
// allowed roots, Delta locations and Iceberg warehouses elsewhere in object
// storage are refused, and a Delta sink inside it works.
func TestObjectStorageAllowedRoots(t *testing.T) {
	prefix := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
	dir := t.TempDir()
	e, err := Open(context.Background(), Options{DataDir: dir, AllowedRoots: []string{dir, lake.URL(prefix + "/allowed")}, Storage: lake.Options()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	te := &testEngine{t: t, e: e}
	s := te.session()
	te.fails(s, fmt.Sprintf("CREATE SINK d INTO DELTA '%s' (id BIGINT)", lake.URL(prefix+"/other/t")), "outside the allowed roots")
	te.fails(s, fmt.Sprintf("CREATE SINK d INTO DELTA '%s' (id BIGINT)", lake.URL(prefix+"/allowedx/t")), "outside the allowed roots")
	te.fails(s, fmt.Sprintf("CREATE SINK i INTO ICEBERG 'ns.t' (id BIGINT) WITH (catalog.warehouse = '%s')", lake.URL(prefix+"/other")), "outside the allowed roots")
	te.exec(s, fmt.Sprintf("CREATE SINK d INTO DELTA '%s' (id BIGINT NOT NULL)", lake.URL(prefix+"/allowed/t")))
	te.exec(s, "INSERT INTO d VALUES (1)")
	if d := cmp.Diff([][]any{{int64(1)}}, te.rows(s, "SELECT id FROM d")); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
}
