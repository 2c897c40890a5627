package sqlsink

import (
	"context"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"testing"

	"github.com/lakesql/lakesql/tableformat/delta"
)

// logEntry is one commit of a table's Delta log, as the tests read it.
type logEntry struct {
	version int64
	op      string
	txns    []delta.Txn
	adds    []*delta.Add
	removes []*delta.Remove
}

// writerEpoch names the epoch a commit recorded.
type writerEpoch struct {
	writer string
	epoch  int64
}

func (l logEntry) recorded() (writerEpoch, bool) {
	if len(l.txns) != 1 {
		return writerEpoch{}, false
	}
	return writerEpoch{l.txns[0].AppID, l.txns[0].Version}, true
}

var commitKey = regexp.MustCompile(`^_delta_log/(\d{20})\.json$`)

func isCommitKey(key string) bool { return commitKey.MatchString(key) }

// readDeltaLog lists and parses every JSON commit of the log in store,
// straight from the storage. It fails the test on an entry that does not
// parse (a partial version) or unless the versions are exactly 0..len-1.
func readDeltaLog(t testing.TB, store delta.Storage) []logEntry {
	t.Helper()
	ctx := context.Background()
	objs, err := store.List(ctx, "_delta_log/", "")
	if err != nil {
		t.Fatal(err)
	}
	var out []logEntry
	for _, o := range objs {
		m := commitKey.FindStringSubmatch(o.Key)
		if m == nil {
			continue
		}
		v, _ := strconv.ParseInt(m[1], 10, 64)
		data, err := store.Get(ctx, o.Key)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		actions, err := delta.ParseActions(data)
		if err != nil {
			t.Fatalf("version %d is not a whole log entry: %v\n%s", v, err, data)
		}
		le := logEntry{version: v}
		for _, a := range actions {
			switch {
			case a.CommitInfo != nil:
				le.op, _ = a.CommitInfo["operation"].(string)
			case a.Txn != nil:
				le.txns = append(le.txns, *a.Txn)
			case a.Add != nil:
				le.adds = append(le.adds, a.Add)
			case a.Remove != nil:
				le.removes = append(le.removes, a.Remove)
			}
		}
		out = append(out, le)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, le := range out {
		if le.version != int64(i) {
			t.Fatalf("the log is not contiguous: version %d where %d belongs", le.version, i)
		}
	}
	return out
}

// fileKey is the storage key of a data file the log names by its
// (URL-escaped, table-relative) path.
func fileKey(t testing.TB, path string) string {
	t.Helper()
	key, err := url.PathUnescape(path)
	if err != nil {
		t.Fatalf("data file path %q: %v", path, err)
	}
	return key
}
