package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/lakesql/lakesql/tableformat/delta"
)

// deltaInfo prints what a snapshot holds: a quick way to look at a table
// written by us or by another engine.
func deltaInfo(ctx context.Context, args []string, w io.Writer) error {
	if len(args) < 1 || len(args) > 2 {
		return fmt.Errorf("usage: lakesql delta-info DIR [VERSION]")
	}
	store, err := delta.NewLocalStorage(args[0])
	if err != nil {
		return err
	}
	table := delta.NewTable(store)
	var snap *delta.Snapshot
	if len(args) == 2 {
		v, perr := strconv.ParseInt(args[1], 10, 64)
		if perr != nil {
			return fmt.Errorf("version %q: %w", args[1], perr)
		}
		snap, err = table.At(ctx, v)
	} else {
		snap, err = table.Latest(ctx)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "version: %d\n", snap.Version)
	fmt.Fprintf(w, "checkpoint: %d\n", snap.CheckpointVersion)
	fmt.Fprintf(w, "protocol: reader %d, writer %d\n", snap.Protocol.MinReaderVersion, snap.Protocol.MinWriterVersion)
	schema, err := snap.Schema()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "schema: %s\n", schema)
	fmt.Fprintf(w, "partition columns: %v\n", snap.Metadata.PartitionColumns)
	var rows, bytes int64
	for _, f := range snap.Files() {
		bytes += f.Size
		if n, ok := f.NumRecords(); ok {
			rows += n
		}
	}
	fmt.Fprintf(w, "files: %d (%d bytes, %d rows by stats)\n", len(snap.Files()), bytes, rows)
	for _, t := range snap.Txns() {
		fmt.Fprintf(w, "txn: %s = %d\n", t.AppID, t.Version)
	}
	return nil
}
