package sinkdef

import (
	"strings"
	"testing"

	"github.com/lakesql/lakesql/sinkddl"
)

// TestShownStatementMasksURISecrets: SHOW CREATE SINK masks a password
// inside storage.endpoint's URL and inside catalog.uri, as user:password@
// or as a password=, token= or key= parameter, along with the secret
// keys; the rest of each URL stays.
func TestShownStatementMasksURISecrets(t *testing.T) {
	for q, want := range map[string]string{
		"CREATE SINK d INTO DELTA 's3://b/t' (id INT) WITH (storage.endpoint = 'http://u:pw-1@h:9000', storage.access_key_id = 'a', storage.secret_access_key = 'sk-1')": "CREATE SINK `d` INTO DELTA 's3://b/t' (`id` INT) WITH (storage.endpoint = 'http://u:****@h:9000', storage.access_key_id = 'a', storage.secret_access_key = '****')",
		"CREATE SINK i INTO ICEBERG 'db.t' (id INT) WITH (catalog.uri = 'postgres://h/db?user=u&password=pw-2&sslmode=disable', catalog.sql.driver = 'postgres')":        "CREATE SINK `i` INTO ICEBERG 'db.t' (`id` INT) WITH (catalog.uri = 'postgres://h/db?user=u&password=[REDACTED]&sslmode=disable', catalog.sql.driver = 'postgres')",
		"CREATE SINK r INTO ICEBERG 'db.t' (id INT) WITH (catalog.type = 'rest', catalog.uri = 'https://cat/v1?token=tk-3')":                                             "CREATE SINK `r` INTO ICEBERG 'db.t' (`id` INT) WITH (catalog.type = 'rest', catalog.uri = 'https://cat/v1?token=[REDACTED]')",
		"CREATE SINK p INTO ICEBERG 'db.t' (id INT) WITH (catalog.uri = 'postgres://u:pw-4@h/db')":                                                                       "CREATE SINK `p` INTO ICEBERG 'db.t' (`id` INT) WITH (catalog.uri = 'postgres://u:[REDACTED]@h/db')",
	} {
		st, err := sinkddl.Parse(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		got := Shown(st.(*sinkddl.CreateSink))
		if got != want {
			t.Errorf("shown\n got %s\nwant %s", got, want)
		}
		for _, s := range []string{"pw-1", "sk-1", "pw-2", "tk-3", "pw-4"} {
			if strings.Contains(got, s) {
				t.Errorf("%s shows %s", got, s)
			}
		}
	}
}
