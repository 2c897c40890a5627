// Package bytesize reads the byte sizes users write in options, such as
// '128MB'.
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads a byte size: a number of bytes, or a number with one of
// the units KB, MB, GB, TB (powers of 1024; KiB etc. are accepted too).
func Parse(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40},
		{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"TB", 1 << 40}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size such as '128MB'", s)
	}
	return n * mult, nil
}
