package sqlsink

// The Iceberg sink tests once more with the catalog behind REST
// (icebergtest.REST): they skip unless icebergtest.RESTURIEnv names one.

import (
	"testing"

	"github.com/lakesql/lakesql/internal/icebergtest"
)

// TestRESTSinkUpsertRowDelta: through a REST catalog, upserts and
// changelog deletes land as one row delta per epoch (the REST server
// commits iceberg-go's requirements and updates), and iceberg-go's scan
// and DuckDB's read agree after each epoch.
func TestRESTSinkUpsertRowDelta(t *testing.T) { sinkUpsertRowDelta(t, icebergtest.REST(t, ordersID)) }

// TestManyProcessesAppendREST is TestManyProcessesAppend with the catalog
// behind REST: 4 processes race their commits through the server.
func TestManyProcessesAppendREST(t *testing.T) { manyProcessesAppend(t, icebergtest.REST(t, ordersID)) }
