package wire

import "testing"

func TestPadBinaryTimeText(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		date     bool
		time     bool
	}{
		{in: "1-1-1 0:0:0.1", want: "0001-01-01 00:00:00.000001"},
		{in: "2024-5-6 7:8:9.50000", want: "2024-05-06 07:08:09.050000"},
		{in: "500-6-15 10:20:30", want: "0500-06-15 10:20:30"},
		{in: "9999-12-31 23:59:59.999999", want: "9999-12-31 23:59:59.999999"},
		{in: "500-6-15", want: "0500-06-15", date: true},
		{in: " ", want: "0000-00-00 00:00:00"},
		{in: " ", want: "0000-00-00", date: true},
		{in: "-838:59:59.5", want: "-838:59:59.000005", time: true},
		{in: "1:2:3", want: "01:02:03", time: true},
	} {
		var got string
		var ok bool
		if tc.time {
			got, ok = padTime(tc.in)
		} else {
			got, ok = padDatetime(tc.in, tc.date)
		}
		if !ok || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	for _, bad := range []string{"", "x-1-1", "1-1", "1-1-1 0:0", "1-1-1 0:0:0.x"} {
		if got, ok := padDatetime(bad, false); ok {
			t.Errorf("%q: padded to %q, want it left alone", bad, got)
		}
	}
}
