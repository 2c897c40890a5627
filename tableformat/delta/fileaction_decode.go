package delta

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// decodeFileAction decodes a line holding one add or remove action in the
// shape writers produce, without reflection: most of a large log is such
// lines, and encoding/json spends most of an open on them. It reports
// false for anything else (another action, a key it does not know, a key
// spelled twice, a null where a value is expected, a number that is not a
// plain integer, invalid JSON), and the caller decodes the line with
// encoding/json; what it accepts, it decodes exactly as encoding/json
// would (FuzzParseActions compares the two).
func decodeFileAction(line []byte) (Action, bool) {
	// One string per line: decoded strings without escapes share it.
	s := lineScanner{src: string(line)}
	if !s.consume('{') {
		return Action{}, false
	}
	kind, ok := s.str()
	if !ok || !s.consume(':') {
		return Action{}, false
	}
	var a Action
	switch kind {
	case "add":
		a.Add = new(Add)
		ok = s.add(a.Add)
	case "remove":
		a.Remove = new(Remove)
		ok = s.remove(a.Remove)
	default:
		return Action{}, false
	}
	if !ok || !s.consume('}') {
		return Action{}, false
	}
	s.ws()
	return a, s.pos == len(s.src)
}

// lineScanner reads JSON tokens from a line.
type lineScanner struct {
	src string
	pos int
}

// fields walks the members of an object, calling member with each key
// once the scanner stands on its value; member reads the value and
// reports false to give up. A key seen twice gives up too (encoding/json
// would merge the two values).
func (s *lineScanner) fields(member func(key string) bool) bool {
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	var seen [12]string // more keys than an action has: give up
	for n := 0; ; n++ {
		k, ok := s.str()
		if !ok || n == len(seen) || slices.Contains(seen[:n], k) || !s.consume(':') || !member(k) {
			return false
		}
		seen[n] = k
		if s.consume(',') {
			continue
		}
		return s.consume('}')
	}
}

func (s *lineScanner) add(a *Add) bool {
	return s.fields(func(k string) bool {
		var ok bool
		switch k {
		case "path":
			a.Path, ok = s.str()
		case "partitionValues":
			a.PartitionValues, ok = s.stringMap()
		case "size":
			a.Size, ok = s.int(64)
		case "modificationTime":
			a.ModificationTime, ok = s.int(64)
		case "dataChange":
			a.DataChange, ok = s.bool()
		case "stats":
			a.Stats, ok = s.str()
		case "tags":
			a.Tags, ok = s.stringMap()
		case "deletionVector":
			a.DeletionVector = new(DeletionVectorDescriptor)
			ok = s.deletionVector(a.DeletionVector)
		case "baseRowId":
			a.BaseRowID, ok = s.intPtr()
		case "defaultRowCommitVersion":
			a.DefaultRowCommitVersion, ok = s.intPtr()
		case "clusteringProvider":
			var v string
			v, ok = s.str()
			a.ClusteringProvider = &v
		}
		return ok
	})
}

func (s *lineScanner) remove(r *Remove) bool {
	return s.fields(func(k string) bool {
		var ok bool
		switch k {
		case "path":
			r.Path, ok = s.str()
		case "deletionTimestamp":
			r.DeletionTimestamp, ok = s.intPtr()
		case "dataChange":
			r.DataChange, ok = s.bool()
		case "extendedFileMetadata":
			var v bool
			v, ok = s.bool()
			r.ExtendedFileMetadata = &v
		case "partitionValues":
			r.PartitionValues, ok = s.stringMap()
		case "size":
			r.Size, ok = s.intPtr()
		case "stats":
			r.Stats, ok = s.str()
		case "tags":
			r.Tags, ok = s.stringMap()
		case "deletionVector":
			r.DeletionVector = new(DeletionVectorDescriptor)
			ok = s.deletionVector(r.DeletionVector)
		case "baseRowId":
			r.BaseRowID, ok = s.intPtr()
		case "defaultRowCommitVersion":
			r.DefaultRowCommitVersion, ok = s.intPtr()
		}
		return ok
	})
}

func (s *lineScanner) deletionVector(d *DeletionVectorDescriptor) bool {
	return s.fields(func(k string) bool {
		var ok bool
		var n int64
		switch k {
		case "storageType":
			d.StorageType, ok = s.str()
		case "pathOrInlineDv":
			d.PathOrInlineDv, ok = s.str()
		case "offset":
			n, ok = s.int(32)
			v := int32(n)
			d.Offset = &v
		case "sizeInBytes":
			n, ok = s.int(32)
			d.SizeInBytes = int32(n)
		case "cardinality":
			d.Cardinality, ok = s.int(64)
		case "maxRowIndex":
			d.MaxRowIndex, ok = s.intPtr()
		}
		return ok
	})
}

// stringMap reads an object of strings and nulls (partitionValues, tags).
func (s *lineScanner) stringMap() (map[string]*string, bool) {
	if !s.consume('{') {
		return nil, false
	}
	m := map[string]*string{}
	if s.consume('}') {
		return m, true
	}
	for {
		k, ok := s.str()
		if !ok || !s.consume(':') {
			return nil, false
		}
		if s.literal("null") {
			m[k] = nil // a key repeated: the last wins, as in encoding/json
		} else {
			v, ok := s.str()
			if !ok {
				return nil, false
			}
			m[k] = &v
		}
		if s.consume(',') {
			continue
		}
		return m, s.consume('}')
	}
}

// ws skips JSON whitespace.
func (s *lineScanner) ws() {
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

// consume reads the byte c after any whitespace.
func (s *lineScanner) consume(c byte) bool {
	s.ws()
	if s.pos < len(s.src) && s.src[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

// literal reads the word lit (null, true, false).
func (s *lineScanner) literal(lit string) bool {
	s.ws()
	if len(s.src)-s.pos >= len(lit) && s.src[s.pos:s.pos+len(lit)] == lit {
		s.pos += len(lit)
		return true
	}
	return false
}

func (s *lineScanner) bool() (bool, bool) {
	switch {
	case s.literal("true"):
		return true, true
	case s.literal("false"):
		return false, true
	}
	return false, false
}

// int reads a plain integer of the bit size; a fraction, an exponent or
// an overflow gives up (encoding/json rejects them for an integer field).
func (s *lineScanner) int(bits int) (int64, bool) {
	s.ws()
	start := s.pos
	if s.pos < len(s.src) && s.src[s.pos] == '-' {
		s.pos++
	}
	digits := s.pos
	for s.pos < len(s.src) && s.src[s.pos] >= '0' && s.src[s.pos] <= '9' {
		s.pos++
	}
	if s.pos == digits || (s.src[digits] == '0' && s.pos-digits > 1) {
		return 0, false
	}
	if s.pos < len(s.src) && (s.src[s.pos] == '.' || s.src[s.pos] == 'e' || s.src[s.pos] == 'E') {
		return 0, false
	}
	v, err := strconv.ParseInt(s.src[start:s.pos], 10, bits)
	return v, err == nil
}

func (s *lineScanner) intPtr() (*int64, bool) {
	v, ok := s.int(64)
	return &v, ok
}

// str reads a string. One without escapes is a slice of the line; simple
// escapes are decoded here; a \u escape or a byte beyond ASCII goes to
// encoding/json, for its handling of surrogates and invalid UTF-8.
func (s *lineScanner) str() (string, bool) {
	s.ws()
	if s.pos >= len(s.src) || s.src[s.pos] != '"' {
		return "", false
	}
	start := s.pos + 1
	for i := start; i < len(s.src); i++ {
		switch c := s.src[i]; {
		case c == '"':
			s.pos = i + 1
			return s.src[start:i], true
		case c == '\\':
			return s.escaped(start)
		case c < 0x20 || c >= 0x80:
			return s.viaJSON(start)
		}
	}
	return "", false
}

// escaped decodes a string from start (after its quote) that holds escapes.
func (s *lineScanner) escaped(start int) (string, bool) {
	end := s.tokenEnd(start)
	if end < 0 {
		return "", false
	}
	var buf strings.Builder
	buf.Grow(end - start) // at least the decoded length; String does not copy
	for i := start; i < len(s.src); i++ {
		c := s.src[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return buf.String(), true
		case c < 0x20 || c >= 0x80:
			return s.viaJSON(start)
		case c != '\\':
			// Copy up to the next quote or escape at once.
			j := i + 1
			for j < len(s.src) && s.src[j] != '"' && s.src[j] != '\\' && s.src[j] >= 0x20 && s.src[j] < 0x80 {
				j++
			}
			buf.WriteString(s.src[i:j])
			i = j - 1
			continue
		}
		if i++; i == len(s.src) {
			return "", false
		}
		switch s.src[i] {
		case '"', '\\', '/':
			buf.WriteByte(s.src[i])
		case 'b':
			buf.WriteByte('\b')
		case 'f':
			buf.WriteByte('\f')
		case 'n':
			buf.WriteByte('\n')
		case 'r':
			buf.WriteByte('\r')
		case 't':
			buf.WriteByte('\t')
		default:
			return s.viaJSON(start)
		}
	}
	return "", false
}

// viaJSON decodes the string from start (after its quote) with
// encoding/json.
func (s *lineScanner) viaJSON(start int) (string, bool) {
	end := s.tokenEnd(start)
	if end < 0 {
		return "", false
	}
	var v string
	if err := json.Unmarshal([]byte(s.src[start-1:end+1]), &v); err != nil {
		return "", false
	}
	s.pos = end + 1
	return v, true
}

// tokenEnd is the index of the quote that closes the string from start
// (after its opening quote), or -1.
func (s *lineScanner) tokenEnd(start int) int {
	for i := start; i < len(s.src); i++ {
		switch s.src[i] {
		case '"':
			return i
		case '\\':
			i++
		}
	}
	return -1
}
