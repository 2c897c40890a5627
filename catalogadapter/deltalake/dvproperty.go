package deltalake

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// deletionVectorsRule: delta.enableDeletionVectors = true upgrades the
// protocol to list the deletionVectors feature (PROTOCOL.md "Deletion
// Vectors": reader 3, writer 7, the feature in both lists). false, or
// unsetting it, stops new vectors; the feature stays, since files may
// carry vectors.
func deletionVectorsRule(c *propertyChange, key, value string, unset bool) error {
	if unset || strings.EqualFold(value, "false") {
		return nil
	}
	if !strings.EqualFold(value, "true") {
		return fmt.Errorf("%w: table property %s must be true or false, got %q", catalogadapter.ErrInvalid, key, value)
	}
	p, err := delta.DeletionVectorProtocol(c.proto)
	if err != nil {
		if errors.Is(err, delta.ErrUnsupportedFeature) {
			return fmt.Errorf("%w: %w", catalogadapter.ErrUnsupported, err)
		}
		return err
	}
	c.proto = p
	c.conf[key] = "true"
	return nil
}
