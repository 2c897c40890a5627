package wire

import (
	"fmt"
	"io"
)

// fdReserve is how many file descriptors the server keeps for its own
// files beside its connections: the data directory's lock and registry,
// DuckDB's database and spill files, the data and log files statements
// read and write, and the connections refused with 1040 while they are
// answered.
const fdReserve = 128

// fitOpenFileLimit sets the open-file limit to want (when not 0) and
// returns max connections lowered to what the open-file
// limit holds beside fdReserve (half the limit when it is below twice
// the reserve), writing a warning to log when it lowers it, as MySQL
// lowers max_connections at start. Connections beyond the limit are then
// refused with 1040, not left to fail in accept for want of descriptors.
func fitOpenFileLimit(want, max uint64, log io.Writer) (uint64, error) {
	if want > 0 {
		if err := setOpenFileLimit(want); err != nil {
			return 0, err
		}
	}
	lim, ok := openFileLimit()
	if !ok {
		return max, nil
	}
	room := lim / 2
	if lim > 2*fdReserve {
		room = lim - fdReserve
	}
	if room < 1 {
		room = 1
	}
	if max <= room {
		return max, nil
	}
	fmt.Fprintf(log, "lakesql serve: max_connections lowered to %d (requested %d): the open-file limit is %d "+
		"and the server keeps %d for its own files; raise the limit (ulimit -n) to allow more\n",
		room, max, lim, min(fdReserve, lim-room))
	return room, nil
}
