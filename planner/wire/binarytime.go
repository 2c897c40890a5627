package wire

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// vitess decodes a binary DATETIME, TIMESTAMP, DATE or TIME parameter of
// COM_STMT_EXECUTE into text without zero padding: year 500 becomes
// "500-6-15 ..." (refused as a datetime) and 5 microseconds ".5" (read
// as half a second). padBinaryTimes writes those parameters out again
// at fixed width before go-mysql-server reads them. Binary result rows
// need nothing: vitess encodes them from go-mysql-server's fixed-width
// text.
func padBinaryTimes(p *mysql.PrepareData) {
	if p == nil {
		return
	}
	for i, typ := range p.ParamsType {
		t := querypb.Type(typ)
		if t != sqltypes.Datetime && t != sqltypes.Timestamp && t != sqltypes.Date && t != sqltypes.Time {
			continue
		}
		key := "v" + strconv.Itoa(i+1)
		bv := p.BindVars[key]
		// Only what vitess decoded from the binary form is text here; a
		// parameter sent with COM_STMT_SEND_LONG_DATA is bytes.
		if bv == nil || bv.Type != querypb.Type_VARCHAR {
			continue
		}
		var s string
		var ok bool
		if t == sqltypes.Time {
			s, ok = padTime(string(bv.Value))
		} else {
			s, ok = padDatetime(string(bv.Value), t == sqltypes.Date)
		}
		if ok {
			p.BindVars[key] = sqltypes.StringBindVariable(s)
		}
	}
}

// padDatetime rewrites vitess's "Y-M-D[ h:m:s[.u]]", u a count of
// microseconds, as "YYYY-MM-DD[ hh:mm:ss[.uuuuuu]]". vitess decodes the
// 0-byte form (MySQL's zero date) as " ".
func padDatetime(s string, date bool) (string, bool) {
	if s == " " {
		if date {
			return "0000-00-00", true
		}
		return "0000-00-00 00:00:00", true
	}
	day, clock, hasClock := strings.Cut(s, " ")
	ymd, ok := numbers(day, "-", 3)
	if !ok {
		return "", false
	}
	out := fmt.Sprintf("%04d-%02d-%02d", ymd[0], ymd[1], ymd[2])
	if !hasClock {
		return out, true
	}
	clock, frac, hasFrac := strings.Cut(clock, ".")
	hms, ok := numbers(clock, ":", 3)
	if !ok {
		return "", false
	}
	out += fmt.Sprintf(" %02d:%02d:%02d", hms[0], hms[1], hms[2])
	if hasFrac {
		us, ok := numbers(frac, "", 1)
		if !ok {
			return "", false
		}
		out += fmt.Sprintf(".%06d", us[0])
	}
	return out, true
}

// padTime rewrites vitess's "[-]H:M:S[.u]" as "[-]HH:MM:SS[.uuuuuu]".
func padTime(s string) (string, bool) {
	sign := ""
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		sign, s = "-", rest
	}
	clock, frac, hasFrac := strings.Cut(s, ".")
	hms, ok := numbers(clock, ":", 3)
	if !ok {
		return "", false
	}
	out := fmt.Sprintf("%s%02d:%02d:%02d", sign, hms[0], hms[1], hms[2])
	if hasFrac {
		us, ok := numbers(frac, "", 1)
		if !ok {
			return "", false
		}
		out += fmt.Sprintf(".%06d", us[0])
	}
	return out, true
}

// numbers splits s at sep into n unsigned decimal numbers.
func numbers(s, sep string, n int) ([]uint64, bool) {
	parts := []string{s}
	if sep != "" {
		parts = strings.Split(s, sep)
	}
	if len(parts) != n {
		return nil, false
	}
	out := make([]uint64, n)
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}
