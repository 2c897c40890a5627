package catalogadapter

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/internal/duckdbtype"
)

// DuckDBType spells an Arrow type as a DuckDB SQL type (duckdbtype.Of), so
// the layers above can buffer and cast rows in DuckDB without knowing the
// table format; a type it cannot spell is ErrUnsupported.
func DuckDBType(t arrow.DataType) (string, error) {
	name, err := duckdbtype.Of(t)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return name, nil
}
