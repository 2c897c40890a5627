package sinkdef

import (
	"fmt"
	"strings"

	"github.com/lakesql/lakesql/sinkddl"
	"github.com/lakesql/lakesql/sqlsink"
)

// parseDVOption reads the deletion vector options of a Delta sink:
// delete_mode = 'deletion_vectors' | 'copy_on_write', and
// deletion_vectors = TRUE | FALSE (TRUE creates the table with the
// deletionVectors feature and delta.enableDeletionVectors on).
func parseDVOption(so *sinkOptions, o sinkddl.Option) error {
	v := strings.ToLower(o.Value)
	switch o.Key {
	case "delete_mode":
		m := sqlsink.DeleteMode(v)
		if m != sqlsink.DeleteModeDeletionVectors && m != sqlsink.DeleteModeCopyOnWrite {
			return fmt.Errorf("%q is not a delete mode (deletion_vectors or copy_on_write)", o.Value)
		}
		so.deleteMode = m
	case "deletion_vectors":
		if o.Kind == sinkddl.OptionInteger || (v != "true" && v != "false") {
			return fmt.Errorf("%s is not TRUE or FALSE", o.Value)
		}
		so.deletionVectors = v == "true"
	}
	return nil
}
