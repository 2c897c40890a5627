package iceberg

// Every call to a catalog has a deadline. A catalog that accepts a
// connection and never answers (a REST server that hangs, a SQL catalog's
// database behind a dead link) would otherwise hold its caller for ever:
// iceberg-go's REST client has no timeout of its own, only the context.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultTimeout bounds a catalog call when CatalogConfig.Timeout is 0.
const DefaultTimeout = 30 * time.Second

// callTimeout is d, or DefaultTimeout for 0; negative is none.
func callTimeout(d time.Duration) time.Duration {
	if d == 0 {
		return DefaultTimeout
	}
	return d
}

// Bound returns ctx with the catalog's deadline for one call to it.
func (c *Catalog) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return bound(ctx, c.timeout)
}

func bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d < 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// Timed marks err as ErrTimeout when the call's own deadline (call,
// from Bound) ran out while the caller's context (parent) did not: the
// catalog did not answer in time.
func (c *Catalog) Timed(call, parent context.Context, err error) error {
	return timed(call, parent, err, c.typ, c.timeout)
}

func timed(call, parent context.Context, err error, typ string, d time.Duration) error {
	if err == nil || errors.Is(err, ErrTimeout) || parent.Err() != nil ||
		!errors.Is(call.Err(), context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: the Iceberg %s catalog did not answer within %v (--catalog-timeout): %w", ErrTimeout, typ, d, err)
}
