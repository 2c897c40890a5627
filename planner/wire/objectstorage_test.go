package wire

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakesql/lakesql/internal/s3test"
)

// TestObjectStorageConfig: Config.TableRoot and Config.Storage reach the
// engine: a relative Delta location lands in the bucket, with the storage
// options of the config; SHOW SINKS shows where the table is.
func TestObjectStorageConfig(t *testing.T) {
	lake := s3test.Start(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(context.Background(), Config{Listener: l, DataDir: t.TempDir(), RootPassword: testPassword,
		TableRoot: lake.URL("root"), Storage: lake.Options()})
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	ts := &testServer{t: t, srv: srv, addr: srv.Addr().String(), done: make(chan error, 1)}
	go func() { ts.done <- srv.Serve() }()
	t.Cleanup(ts.stop)

	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK s INTO DELTA 'lake/s' (id BIGINT NOT NULL)")
	mustExec(t, db, "INSERT INTO s VALUES (1), (2)")
	if got := ids(t, db, "s"); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("ids = %v", got)
	}
	if _, err := lake.S3Client().HeadObject(context.Background(), &s3.HeadObjectInput{
		Bucket: aws.String(lake.Bucket), Key: aws.String("root/lake/s/_delta_log/00000000000000000001.json"),
	}); err != nil {
		t.Errorf("the INSERT's commit is not in the bucket: %v", err)
	}
	var name, format, location, mode string
	if err := db.QueryRow("SHOW SINKS").Scan(&name, &format, &location, &mode); err != nil {
		t.Fatal(err)
	}
	if location != lake.URL("root/lake/s") {
		t.Errorf("SHOW SINKS location %s, want %s", location, lake.URL("root/lake/s"))
	}
	// A bad storage option is refused when the server starts, its value
	// unshown when it is a secret.
	_, err = New(context.Background(), Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), RootPassword: testPassword,
		Storage: map[string]string{"storage.secret_access_key": lake.SecretKey, "storage.max_attempts": "none"}})
	if err == nil || !strings.Contains(err.Error(), "storage.max_attempts") || strings.Contains(err.Error(), lake.SecretKey) {
		t.Errorf("bad storage option: %v", err)
	}
}
