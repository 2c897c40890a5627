package wire

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lakesql/lakesql/internal/s3test"
)

// TestProcessListMasksSecrets: SHOW PROCESSLIST and
// information_schema.PROCESSLIST show another session's running statement
// with its secrets masked, and the rest of its text as written.
func TestProcessListMasksSecrets(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	// An upsert sink: its writers wait for each other (appending
	// transactions would not).
	mustExec(t, db, "CREATE SINK pl INTO DELTA 'pl' (id BIGINT NOT NULL, PRIMARY KEY (id)) WITH (mode = 'upsert')")
	ctx := context.Background()
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	// The waiting INSERT stays in the process list until holder lets go.
	mustExec(t, holder, "BEGIN")
	mustExec(t, holder, "INSERT INTO pl VALUES (1)")
	const secretKey, password = "hunter2-key-7Q", "pw-in-uri-9Z"
	waiting := fmt.Sprintf("INSERT INTO pl VALUES (2) /* storage.secret_access_key = '%s', catalog.uri = 'postgres://h/db?user=u&password=%s' */", secretKey, password)
	done := make(chan error, 1)
	go func() { _, err := db.ExecContext(ctx, waiting); done <- err }()
	viewer := ts.db(testPassword)
	for _, q := range []string{"SHOW PROCESSLIST", "SELECT id, user, host, db, command, time, state, info FROM information_schema.PROCESSLIST"} {
		info := waitForInfo(t, viewer, q, "INSERT INTO pl VALUES (2)")
		if strings.Contains(info, secretKey) || strings.Contains(info, password) {
			t.Errorf("%s shows the secrets: %s", q, info)
		}
		want := "INSERT INTO pl VALUES (2) /* storage.secret_access_key = '****', catalog.uri = 'postgres://h/db?user=u&password=****' */"
		if info != want {
			t.Errorf("%s: Info\n got %s\nwant %s", q, info, want)
		}
	}
	mustExec(t, holder, "ROLLBACK")
	if err := <-done; err != nil {
		t.Errorf("the waiting INSERT: %v", err)
	}
}

// waitForInfo polls a process list query until a row's Info starts with
// prefix, and returns that Info.
func waitForInfo(t *testing.T, db *sql.DB, query, prefix string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		rows, err := db.Query(query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		for rows.Next() {
			var id, user, host, dbName, command, tm, state, info sql.NullString
			if err := rows.Scan(&id, &user, &host, &dbName, &command, &tm, &state, &info); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
			if strings.HasPrefix(info.String, prefix) {
				rows.Close()
				return info.String
			}
		}
		rows.Close()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never showed a statement starting %q", query, prefix)
	return ""
}

// TestShowCreateSinkMasksEndpointPassword: a password inside
// storage.endpoint's URL is masked in SHOW CREATE SINK, as the secret key
// is.
func TestShowCreateSinkMasksEndpointPassword(t *testing.T) {
	lake := s3test.Start(t)
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	opts := lake.Options()
	endpoint := strings.Replace(opts["storage.endpoint"], "://", "://proxyuser:proxy-pw-5X@", 1)
	mustExec(t, db, fmt.Sprintf("CREATE SINK ep INTO DELTA '%s' (id BIGINT NOT NULL) WITH (storage.endpoint = '%s', storage.access_key_id = '%s', storage.secret_access_key = '%s', storage.region = '%s', storage.path_style = 'true')",
		lake.URL("ep"), endpoint, opts["storage.access_key_id"], opts["storage.secret_access_key"], opts["storage.region"]))
	mustExec(t, db, "INSERT INTO ep VALUES (1)")
	var name, shown string
	if err := db.QueryRow("SHOW CREATE SINK ep").Scan(&name, &shown); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(shown, "proxy-pw-5X") || strings.Contains(shown, lake.SecretKey) || !strings.Contains(shown, "storage.endpoint = 'http://proxyuser:****@") {
		t.Errorf("SHOW CREATE SINK: %s", shown)
	}
}
