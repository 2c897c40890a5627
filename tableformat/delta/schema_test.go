package delta

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/klauspost/compress/zstd"
)

// schemaTestOne wraps one column of type t in a table schema.
func schemaTestOne(t DataType, nullable bool) *StructType {
	return &StructType{Fields: []*StructField{{Name: "c", Type: t, Nullable: nullable}}}
}

// schemaTestRoundTrips checks JSON and Arrow round trips of s and returns its JSON.
func schemaTestRoundTrips(t *testing.T, s *StructType) string {
	t.Helper()
	js, err := s.JSON()
	if err != nil {
		t.Fatalf("JSON: %v", err)
	}
	back, err := ParseSchema(js)
	if err != nil {
		t.Fatalf("ParseSchema(%s): %v", js, err)
	}
	if d := cmp.Diff(s, back, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", d)
	}
	if js2, err := back.JSON(); err != nil || js2 != js {
		t.Errorf("re-encoding differs: %s vs %s (%v)", js2, js, err)
	}
	as, err := ToArrowSchema(s)
	if err != nil {
		t.Fatalf("ToArrowSchema: %v", err)
	}
	fromArrow, err := FromArrowSchema(as)
	if err != nil {
		t.Fatalf("FromArrowSchema(%s): %v", as, err)
	}
	if d := cmp.Diff(s, fromArrow, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("Arrow round trip (-want +got):\n%s", d)
	}
	as2, err := ToArrowSchema(fromArrow)
	if err != nil || !as.Equal(as2) {
		t.Errorf("Arrow schema not stable: %s vs %s (%v)", as, as2, err)
	}
	return js
}

func TestSchemaPrimitiveRoundTrip(t *testing.T) {
	cases := []struct {
		typ    DataType
		json   string
		arrow  arrow.DataType
		duckdb string
	}{
		{TypeByte, `"byte"`, arrow.PrimitiveTypes.Int8, "TINYINT"},
		{TypeShort, `"short"`, arrow.PrimitiveTypes.Int16, "SMALLINT"},
		{TypeInteger, `"integer"`, arrow.PrimitiveTypes.Int32, "INTEGER"},
		{TypeLong, `"long"`, arrow.PrimitiveTypes.Int64, "BIGINT"},
		{TypeFloat, `"float"`, arrow.PrimitiveTypes.Float32, "FLOAT"},
		{TypeDouble, `"double"`, arrow.PrimitiveTypes.Float64, "DOUBLE"},
		{TypeBoolean, `"boolean"`, arrow.FixedWidthTypes.Boolean, "BOOLEAN"},
		{TypeString, `"string"`, arrow.BinaryTypes.String, "VARCHAR"},
		{TypeBinary, `"binary"`, arrow.BinaryTypes.Binary, "BLOB"},
		{TypeDate, `"date"`, arrow.FixedWidthTypes.Date32, "DATE"},
		{TypeTimestamp, `"timestamp"`, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, "TIMESTAMPTZ"},
		{TypeTimestampNTZ, `"timestamp_ntz"`, &arrow.TimestampType{Unit: arrow.Microsecond}, "TIMESTAMP"},
		{DecimalType{10, 2}, `"decimal(10,2)"`, &arrow.Decimal128Type{Precision: 10, Scale: 2}, "DECIMAL(10,2)"},
		{DecimalType{1, 0}, `"decimal(1,0)"`, &arrow.Decimal128Type{Precision: 1, Scale: 0}, "DECIMAL(1,0)"},
		{DecimalType{38, 38}, `"decimal(38,38)"`, &arrow.Decimal128Type{Precision: 38, Scale: 38}, "DECIMAL(38,38)"},
	}
	for _, c := range cases {
		for _, nullable := range []bool{true, false} {
			t.Run(c.typ.String(), func(t *testing.T) {
				s := schemaTestOne(c.typ, nullable)
				js := schemaTestRoundTrips(t, s)
				want := `{"type":"struct","fields":[{"name":"c","type":` + c.json +
					`,"nullable":` + map[bool]string{true: "true", false: "false"}[nullable] + `,"metadata":{}}]}`
				if js != want {
					t.Errorf("JSON = %s, want %s", js, want)
				}
				as, _ := ToArrowSchema(s)
				if f := as.Field(0); !arrow.TypeEqual(f.Type, c.arrow) || f.Nullable != nullable {
					t.Errorf("arrow field = %s, want type %s nullable %v", f, c.arrow, nullable)
				}
				if got, err := DuckDBType(c.typ); err != nil || got != c.duckdb {
					t.Errorf("DuckDBType = %q, %v; want %q", got, err, c.duckdb)
				}
			})
		}
	}
}

// schemaTestProtocolExample is the example of PROTOCOL.md, as Spark pretty-prints it.
const schemaTestProtocolExample = `{
  "type" : "struct",
  "fields" : [ {
    "name" : "a", "type" : "integer", "nullable" : false, "metadata" : { }
  }, {
    "name" : "b",
    "type" : { "type" : "struct", "fields" : [ { "name" : "d", "type" : "integer", "nullable" : false, "metadata" : { } } ] },
    "nullable" : true, "metadata" : { }
  }, {
    "name" : "c",
    "type" : { "type" : "array", "elementType" : "integer", "containsNull" : false },
    "nullable" : true, "metadata" : { }
  }, {
    "name" : "e",
    "type" : {
      "type" : "array",
      "elementType" : { "type" : "struct", "fields" : [ { "name" : "d", "type" : "integer", "nullable" : false, "metadata" : { } } ] },
      "containsNull" : true
    },
    "nullable" : true, "metadata" : { }
  }, {
    "name" : "f",
    "type" : { "type" : "map", "keyType" : "string", "valueType" : "string", "valueContainsNull" : true },
    "nullable" : true, "metadata" : { }
  } ]
}`

func TestSchemaProtocolExample(t *testing.T) {
	got, err := ParseSchema(schemaTestProtocolExample)
	if err != nil {
		t.Fatal(err)
	}
	d := &StructType{Fields: []*StructField{{Name: "d", Type: TypeInteger}}}
	want := &StructType{Fields: []*StructField{
		{Name: "a", Type: TypeInteger},
		{Name: "b", Type: d, Nullable: true},
		{Name: "c", Type: &ArrayType{ElementType: TypeInteger}, Nullable: true},
		{Name: "e", Type: &ArrayType{ElementType: d, ContainsNull: true}, Nullable: true},
		{Name: "f", Type: &MapType{KeyType: TypeString, ValueType: TypeString, ValueContainsNull: true}, Nullable: true},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	js := schemaTestRoundTrips(t, got)
	const wantJSON = `{"type":"struct","fields":[` +
		`{"name":"a","type":"integer","nullable":false,"metadata":{}},` +
		`{"name":"b","type":{"type":"struct","fields":[{"name":"d","type":"integer","nullable":false,"metadata":{}}]},"nullable":true,"metadata":{}},` +
		`{"name":"c","type":{"type":"array","elementType":"integer","containsNull":false},"nullable":true,"metadata":{}},` +
		`{"name":"e","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"d","type":"integer","nullable":false,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}},` +
		`{"name":"f","type":{"type":"map","keyType":"string","valueType":"string","valueContainsNull":true},"nullable":true,"metadata":{}}]}`
	if js != wantJSON {
		t.Errorf("JSON =\n%s\nwant\n%s", js, wantJSON)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "e", "f"}, got.FieldNames()); diff != "" {
		t.Errorf("FieldNames (-want +got):\n%s", diff)
	}
	if f := got.Field("e"); f == nil || f.Name != "e" {
		t.Errorf("Field(e) = %v", f)
	}
	if f := got.Field("E"); f != nil {
		t.Errorf("Field is exact, but Field(E) = %v", f)
	}
	if s := got.String(); s != "struct<a:integer,b:struct<d:integer>,c:array<integer>,e:array<struct<d:integer>>,f:map<string,string>>" {
		t.Errorf("String = %s", s)
	}

	as, err := ToArrowSchema(got)
	if err != nil {
		t.Fatal(err)
	}
	c := as.Field(2).Type.(*arrow.ListType)
	if c.ElemField().Name != "element" || c.ElemField().Nullable {
		t.Errorf("c element = %s, want a non-nullable field called element", c.ElemField())
	}
	f := as.Field(4).Type.(*arrow.MapType)
	if !f.ItemField().Nullable || f.KeyField().Nullable {
		t.Errorf("f = %s, want nullable values and non-null keys", f)
	}
}

func TestSchemaNestedCombos(t *testing.T) {
	inner := &StructType{Fields: []*StructField{
		{Name: "x", Type: DecimalType{38, 10}, Nullable: true},
		{Name: `we"ird name`, Type: TypeTimestampNTZ},
	}}
	cases := []struct {
		typ    DataType
		duckdb string
	}{
		{&ArrayType{ElementType: &ArrayType{ElementType: TypeLong}}, "BIGINT[][]"},
		{&ArrayType{ElementType: &MapType{KeyType: TypeString, ValueType: TypeDate}, ContainsNull: true}, "MAP(VARCHAR, DATE)[]"},
		{&MapType{KeyType: TypeString, ValueType: &ArrayType{ElementType: inner, ContainsNull: true}}, `MAP(VARCHAR, STRUCT("x" DECIMAL(38,10), "we""ird name" TIMESTAMP)[])`},
		{&MapType{KeyType: inner, ValueType: &MapType{KeyType: TypeInteger, ValueType: TypeBinary, ValueContainsNull: true}}, `MAP(STRUCT("x" DECIMAL(38,10), "we""ird name" TIMESTAMP), MAP(INTEGER, BLOB))`},
		{&StructType{Fields: []*StructField{
			{Name: "select", Type: &StructType{Fields: []*StructField{{Name: "deep", Type: &ArrayType{ElementType: TypeTimestamp}, Nullable: true}}}},
			{Name: "m", Type: &MapType{KeyType: TypeLong, ValueType: inner, ValueContainsNull: true}, Nullable: true},
		}}, `STRUCT("select" STRUCT("deep" TIMESTAMPTZ[]), "m" MAP(BIGINT, STRUCT("x" DECIMAL(38,10), "we""ird name" TIMESTAMP)))`},
	}
	for _, c := range cases {
		t.Run(c.typ.String(), func(t *testing.T) {
			for _, nullable := range []bool{false, true} {
				schemaTestRoundTrips(t, schemaTestOne(c.typ, nullable))
			}
			got, err := DuckDBType(c.typ)
			if err != nil || got != c.duckdb {
				t.Errorf("DuckDBType = %q, %v\nwant %q", got, err, c.duckdb)
			}
			// The nested types also marshal on their own.
			b, err := json.Marshal(c.typ)
			if err != nil {
				t.Fatal(err)
			}
			back, err := unmarshalDeltaType(b)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.typ, back); d != "" {
				t.Errorf("json.Marshal round trip (-want +got):\n%s", d)
			}
		})
	}
}

func TestSchemaLenientForms(t *testing.T) {
	cases := []struct {
		in   string
		want *StructType
	}{
		{ // legacy bare decimal is Spark's default decimal(10,0); spaces inside decimal()
			`{"type":"struct","fields":[{"name":"a","type":"decimal","nullable":true,"metadata":{}},{"name":"b","type":"decimal( 12 , 3 )","nullable":true,"metadata":{}}]}`,
			&StructType{Fields: []*StructField{{Name: "a", Type: DecimalType{10, 0}, Nullable: true}, {Name: "b", Type: DecimalType{12, 3}, Nullable: true}}},
		},
		{ // missing nullable/containsNull/valueContainsNull/metadata read as true/true/true/none; unknown keys ignored
			`{"type":"struct","fields":[{"name":"a","type":{"type":"array","elementType":{"type":"map","keyType":"string","valueType":"long"}},"comment":"x"}],"extra":1}`,
			&StructType{Fields: []*StructField{{Name: "a", Type: &ArrayType{ElementType: &MapType{KeyType: TypeString, ValueType: TypeLong, ValueContainsNull: true}, ContainsNull: true}, Nullable: true}}},
		},
		{ // null metadata and an empty schema
			`{"type":"struct","fields":[]}`, &StructType{Fields: []*StructField{}},
		},
		{
			` {"type":"struct","fields":[{"name":"","type":"long","nullable":null,"metadata":null}]} `,
			&StructType{Fields: []*StructField{{Name: "", Type: TypeLong, Nullable: true}}},
		},
	}
	for _, c := range cases {
		got, err := ParseSchema(c.in)
		if err != nil {
			t.Errorf("ParseSchema(%s): %v", c.in, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("ParseSchema(%s) (-want +got):\n%s", c.in, d)
		}
		schemaTestRoundTrips(t, got)
	}
}

func TestSchemaMetadataPreserved(t *testing.T) {
	const in = `{"type":"struct","fields":[` +
		`{"name":"id","type":"long","nullable":false,"metadata":{` +
		`"delta.columnMapping.id":9007199254740993,` +
		`"delta.columnMapping.physicalName":"col-6dc68f07",` +
		`"delta.generationExpression":"a > 0 && b < 1",` +
		`"delta.identity.step":-1,"big":1.5e300,"f":0.10,"nul":null,"t":true,` +
		`"arr":[1,"x",{"k":[]}],"obj":{"nested":{"deep":2}},"delta.typeChanges":[{"fromType":"integer","toType":"long"}]}},` +
		`{"name":"s","type":{"type":"struct","fields":[{"name":"inner","type":"string","nullable":true,"metadata":{"comment":"ünïcödé \u2028"}}]},"nullable":true,"metadata":{}}]}`
	s, err := ParseSchema(in)
	if err != nil {
		t.Fatal(err)
	}
	md := s.Field("id").Metadata
	want := map[string]any{
		"delta.columnMapping.id":           json.Number("9007199254740993"),
		"delta.columnMapping.physicalName": "col-6dc68f07",
		"delta.generationExpression":       "a > 0 && b < 1",
		"delta.identity.step":              json.Number("-1"),
		"big":                              json.Number("1.5e300"),
		"f":                                json.Number("0.10"),
		"nul":                              nil,
		"t":                                true,
		"arr":                              []any{json.Number("1"), "x", map[string]any{"k": []any{}}},
		"obj":                              map[string]any{"nested": map[string]any{"deep": json.Number("2")}},
		"delta.typeChanges":                []any{map[string]any{"fromType": "integer", "toType": "long"}},
	}
	if d := cmp.Diff(want, md); d != "" {
		t.Fatalf("metadata (-want +got):\n%s", d)
	}
	if s.Field("s").Metadata != nil {
		t.Errorf("empty metadata should decode to nil, got %#v", s.Field("s").Metadata)
	}
	js := schemaTestRoundTrips(t, s)
	for _, frag := range []string{`9007199254740993`, `1.5e300`, `0.10`, `"a > 0 && b < 1"`} {
		if !strings.Contains(js, frag) {
			t.Errorf("JSON lost %s: %s", frag, js)
		}
	}

	as, err := ToArrowSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	amd := as.Field(0).Metadata
	for k, v := range map[string]string{
		"delta.columnMapping.id":           `9007199254740993`,
		"delta.columnMapping.physicalName": `"col-6dc68f07"`,
		"delta.generationExpression":       `"a > 0 && b < 1"`,
		"nul":                              `null`,
		"obj":                              `{"nested":{"deep":2}}`,
	} {
		if got, ok := amd.GetValue(k); !ok || got != v {
			t.Errorf("arrow metadata %q = %q (%v), want %q", k, got, ok, v)
		}
	}
	if amd.Keys()[0] != "arr" {
		t.Errorf("arrow metadata keys not sorted: %v", amd.Keys())
	}
	inner := as.Field(1).Type.(*arrow.StructType).Field(0)
	// encoding/json escapes U+2028 (legal JSON either way); the value decodes the same.
	if v, _ := inner.Metadata.GetValue("comment"); v != `"ünïcödé \u2028"` {
		t.Errorf("nested arrow metadata = %q", v)
	}
}

func TestSchemaParseErrors(t *testing.T) {
	const pre = `{"type":"struct","fields":[`
	field := func(typ string) string {
		return pre + `{"name":"a","type":` + typ + `,"nullable":true,"metadata":{}}]}`
	}
	corruptCases := []string{
		``, `{`, `null`, `[]`, `"long"`, `42`, `{"type":"array","elementType":"long","containsNull":true}`,
		`{"type":"struct"}`, `{"type":"struct","fields":null}`, `{"type":"struct","fields":{}}`,
		`{"fields":[]}`, pre + `1]}`, pre + `{"type":"long"}]}`, pre + `{"name":5,"type":"long"}]}`,
		pre + `{"name":"a"}]}`, field(`5`), field(`null`), field(`["long"]`), field(`{}`), field(`{"type":7}`),
		pre + `{"name":"a","type":"long","nullable":"yes"}]}`,
		pre + `{"name":"a","type":"long","metadata":[]}]}`,
		pre + `{"name":"a","type":"long","metadata":"x"}]}`,
		field(`{"type":"array","containsNull":true}`),
		field(`{"type":"array","elementType":"long","containsNull":1}`),
		field(`{"type":"map","keyType":"string"}`),
		field(`{"type":"map","keyType":"string","valueType":"long","valueContainsNull":"no"}`),
		field(`{"type":"struct","fields":[{"name":"x","type":"long"},{"name":"x","type":"long"}]}`),
		pre + `{"name":"a","type":"long"},{"name":"A","type":"string"}]}`,
		pre + `{"name":"ß","type":"long"},{"name":"b","type":"long"},{"name":"B","type":"long"}]}`,
		`{"type":"struct","fields":[]} trailing`, `{"type":"struct","fields":[]}{}`,
		`{"type":"struct","fields":[],}`, "{\"type\":\"struct\",\"fields\":[]}\x00",
	}
	for _, in := range corruptCases {
		s, err := ParseSchema(in)
		if err == nil {
			t.Errorf("ParseSchema(%q) = %v, want an error", in, s)
			continue
		}
		if !errors.Is(err, ErrCorruptLog) || errors.Is(err, ErrUnsupportedFeature) {
			t.Errorf("ParseSchema(%q) = %v, want ErrCorruptLog", in, err)
		}
	}

	unsupportedCases := []struct{ in, msg string }{
		{field(`"variant"`), `column "a" has type variant`},
		{field(`"void"`), `column "a" has type void`},
		{field(`"interval"`), `column "a" has type interval`},
		{field(`"geometry(OGC:CRS84)"`), `column "a" has type geometry(OGC:CRS84)`},
		{field(`"geography(OGC:CRS84, spherical)"`), `geography`},
		{field(`"LONG"`), `column "a" has type LONG`},
		{field(`"int"`), `has type int`},
		{field(`"decimal(39,0)"`), `decimal(39,0)`},
		{field(`"decimal(5,6)"`), `decimal(5,6)`},
		{field(`"decimal(0,0)"`), `decimal(0,0)`},
		{field(`"decimal(10,-2)"`), `decimal(10,-2)`},
		{field(`"decimal(-1,0)"`), `decimal(-1,0)`},
		{field(`"decimal(10)"`), `decimal(10)`},
		{field(`"decimal(a,b)"`), `decimal(a,b)`},
		{field(`"decimal(99999999999999999999,1)"`), `decimal(`},
		{field(`"decimal(10,2"`), `decimal(10,2`},
		{field(`{"type":"udt","class":"x","sqlType":"long"}`), `column "a" has type udt`},
		{field(`{"type":"variant"}`), `has type variant`},
		{field(`{"type":"array","elementType":"void","containsNull":true}`), `column "a.element" has type void`},
		{field(`{"type":"map","keyType":"string","valueType":"variant","valueContainsNull":true}`), `column "a.value" has type variant`},
		{field(`{"type":"struct","fields":[{"name":"g","type":"geometry(EPSG:4326)","nullable":true,"metadata":{}}]}`), `column "a.g" has type geometry(EPSG:4326)`},
	}
	for _, c := range unsupportedCases {
		_, err := ParseSchema(c.in)
		if !errors.Is(err, ErrUnsupportedFeature) {
			t.Errorf("ParseSchema(%s) = %v, want ErrUnsupportedFeature", c.in, err)
			continue
		}
		var ue *UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParseSchema(%s) = %v, want *UnsupportedError mentioning %q", c.in, err, c.msg)
		}
	}

	// Typed unmarshalers share the rules.
	var st StructType
	if err := json.Unmarshal([]byte(field(`"void"`)), &st); !errors.Is(err, ErrUnsupportedFeature) {
		t.Errorf("json.Unmarshal StructType: %v", err)
	}
	var at ArrayType
	if err := json.Unmarshal([]byte(`"long"`), &at); err == nil {
		t.Error("ArrayType accepted a primitive")
	}
	var pt PrimitiveType
	if err := json.Unmarshal([]byte(`"decimal(10,2)"`), &pt); err == nil {
		t.Error("PrimitiveType accepted a decimal")
	}
	var dt DecimalType
	if err := json.Unmarshal([]byte(`"decimal(7,3)"`), &dt); err != nil || dt != (DecimalType{7, 3}) {
		t.Errorf("DecimalType = %v, %v", dt, err)
	}
	var sf StructField
	if err := json.Unmarshal([]byte(`{"name":"n","type":{"type":"map","keyType":"long","valueType":"long"},"metadata":{"k":1}}`), &sf); err != nil ||
		sf.Name != "n" || !sf.Nullable || sf.Metadata["k"] != json.Number("1") {
		t.Errorf("StructField = %+v, %v", sf, err)
	}
}

func TestSchemaHandBuiltInvalid(t *testing.T) {
	var nilStruct *StructType
	var nilArray *ArrayType
	var nilMap *MapType
	bad := []*StructType{
		{Fields: []*StructField{nil}},
		{Fields: []*StructField{{Name: "a"}}},
		{Fields: []*StructField{{Name: "a", Type: PrimitiveType("int")}}},
		{Fields: []*StructField{{Name: "a", Type: PrimitiveType("decimal(10,2)")}}},
		{Fields: []*StructField{{Name: "a", Type: DecimalType{39, 0}}}},
		{Fields: []*StructField{{Name: "a", Type: DecimalType{5, -1}}}},
		{Fields: []*StructField{{Name: "a", Type: nilStruct}}},
		{Fields: []*StructField{{Name: "a", Type: nilArray}}},
		{Fields: []*StructField{{Name: "a", Type: nilMap}}},
		{Fields: []*StructField{{Name: "a", Type: &ArrayType{}}}},
		{Fields: []*StructField{{Name: "a", Type: &MapType{KeyType: TypeLong}}}},
		{Fields: []*StructField{{Name: "a", Type: TypeLong}, {Name: "A", Type: TypeLong}}},
		{Fields: []*StructField{{Name: "a", Type: &StructType{Fields: []*StructField{{Name: "x", Type: TypeLong}, {Name: "x", Type: TypeLong}}}}}},
	}
	for i, s := range bad {
		if js, err := s.JSON(); err == nil {
			t.Errorf("%d: JSON = %s, want an error", i, js)
		}
		if as, err := ToArrowSchema(s); err == nil {
			t.Errorf("%d: ToArrowSchema = %s, want an error", i, as)
		}
		for _, f := range s.Fields {
			if f != nil {
				if got, err := DuckDBType(f.Type); err == nil && i != 11 { // 11: only the table level is bad
					t.Errorf("%d: DuckDBType = %s, want an error", i, got)
				}
			}
		}
	}
	nan := &StructType{Fields: []*StructField{{Name: "a", Type: TypeLong, Metadata: map[string]any{"x": math.NaN()}}}}
	if _, err := nan.JSON(); err == nil {
		t.Error("JSON of NaN metadata: want an error")
	}
	if _, err := ToArrowSchema(nan); err == nil {
		t.Error("ToArrowSchema of NaN metadata: want an error")
	}
	if _, err := ToArrowSchema(nil); err == nil {
		t.Error("ToArrowSchema(nil): want an error")
	}
	if _, err := FromArrowSchema(nil); err == nil {
		t.Error("FromArrowSchema(nil): want an error")
	}
	if _, err := DuckDBType(nil); err == nil {
		t.Error("DuckDBType(nil): want an error")
	}
	if got, err := DuckDBType(&StructType{}); !errors.Is(err, ErrUnsupportedFeature) {
		t.Errorf("DuckDBType(empty struct) = %q, %v; want ErrUnsupportedFeature", got, err)
	}
	if got, err := DuckDBType(&StructType{Fields: []*StructField{{Name: "", Type: TypeLong}}}); !errors.Is(err, ErrUnsupportedFeature) {
		t.Errorf("DuckDBType(empty name) = %q, %v; want ErrUnsupportedFeature", got, err)
	}
	var ns *StructType
	if ns.Field("a") != nil || ns.FieldNames() != nil || ns.String() != "<nil>" {
		t.Error("nil StructType helpers")
	}
}

func TestSchemaFromArrowAccepts(t *testing.T) {
	f := func(name string, typ arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: typ, Nullable: true}
	}
	ok := []struct {
		arrow arrow.DataType
		want  DataType
	}{
		{arrow.BinaryTypes.LargeString, TypeString},
		{arrow.BinaryTypes.StringView, TypeString},
		{arrow.BinaryTypes.LargeBinary, TypeBinary},
		{arrow.BinaryTypes.BinaryView, TypeBinary},
		{&arrow.FixedSizeBinaryType{ByteWidth: 16}, TypeBinary},
		{arrow.FixedWidthTypes.Date64, TypeDate},
		{&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "America/New_York"}, TypeTimestamp},
		{&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, TypeTimestamp},
		{&arrow.TimestampType{Unit: arrow.Second}, TypeTimestampNTZ},
		{&arrow.TimestampType{Unit: arrow.Nanosecond}, TypeTimestampNTZ},
		{arrow.PrimitiveTypes.Uint8, TypeShort},
		{arrow.PrimitiveTypes.Uint16, TypeInteger},
		{arrow.PrimitiveTypes.Uint32, TypeLong},
		{arrow.FixedWidthTypes.Float16, TypeFloat},
		{&arrow.Decimal32Type{Precision: 9, Scale: 2}, DecimalType{9, 2}},
		{&arrow.Decimal64Type{Precision: 18, Scale: 0}, DecimalType{18, 0}},
		{&arrow.Decimal256Type{Precision: 38, Scale: 4}, DecimalType{38, 4}},
		{arrow.LargeListOf(arrow.PrimitiveTypes.Int32), &ArrayType{ElementType: TypeInteger, ContainsNull: true}},
		{arrow.FixedSizeListOfNonNullable(3, arrow.PrimitiveTypes.Float64), &ArrayType{ElementType: TypeDouble}},
		{arrow.ListOf(arrow.BinaryTypes.String), &ArrayType{ElementType: TypeString, ContainsNull: true}},
		{arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), &MapType{KeyType: TypeString, ValueType: TypeLong, ValueContainsNull: true}},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, TypeString},
		{arrow.StructOf(f("u", arrow.PrimitiveTypes.Uint8)), &StructType{Fields: []*StructField{{Name: "u", Type: TypeShort, Nullable: true}}}},
	}
	for _, c := range ok {
		got, err := FromArrowSchema(arrow.NewSchema([]arrow.Field{f("c", c.arrow)}, nil))
		if err != nil {
			t.Errorf("FromArrowSchema(%s): %v", c.arrow, err)
			continue
		}
		if d := cmp.Diff(schemaTestOne(c.want, true), got); d != "" {
			t.Errorf("FromArrowSchema(%s) (-want +got):\n%s", c.arrow, d)
		}
	}
	refused := []arrow.DataType{
		arrow.PrimitiveTypes.Uint64,
		arrow.Null,
		arrow.FixedWidthTypes.Time32ms,
		arrow.FixedWidthTypes.Duration_us,
		arrow.FixedWidthTypes.MonthInterval,
		&arrow.Decimal256Type{Precision: 40, Scale: 2},
		arrow.ListOf(arrow.PrimitiveTypes.Uint64),
		arrow.MapOf(arrow.BinaryTypes.String, arrow.Null),
		arrow.StructOf(f("t", arrow.FixedWidthTypes.Time64us)),
	}
	for _, typ := range refused {
		got, err := FromArrowSchema(arrow.NewSchema([]arrow.Field{f("c", typ)}, nil))
		if !errors.Is(err, ErrUnsupportedFeature) {
			t.Errorf("FromArrowSchema(%s) = %v, %v; want ErrUnsupportedFeature", typ, got, err)
		}
	}
	if _, err := FromArrowSchema(arrow.NewSchema([]arrow.Field{f("a", arrow.PrimitiveTypes.Int8), f("A", arrow.PrimitiveTypes.Int8)}, nil)); err == nil {
		t.Error("FromArrowSchema accepted names equal but for case")
	}

	// Metadata that is not JSON (written by someone else) is kept as a string.
	md := arrow.NewMetadata([]string{"PARQUET:field_id", "note", "obj"}, []string{"7", "plain text", `{"a":[1]}`})
	got, err := FromArrowSchema(arrow.NewSchema([]arrow.Field{{Name: "c", Type: arrow.PrimitiveTypes.Int64, Metadata: md}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	wantMD := map[string]any{"PARQUET:field_id": json.Number("7"), "note": "plain text", "obj": map[string]any{"a": []any{json.Number("1")}}}
	if d := cmp.Diff(wantMD, got.Fields[0].Metadata); d != "" {
		t.Errorf("metadata (-want +got):\n%s", d)
	}
}

func TestSchemaKernelTables(t *testing.T) {
	root := filepath.Join("..", "..", "..", "shared", "testdata", "delta", "kernel")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("!!! SKIPPING: Delta kernel test tables not found at %s (%v); schema parsing of real tables is NOT tested !!!", root, err)
	}
	const first = "_delta_log/00000000000000000000.json"
	type commit struct {
		name string
		data []byte
	}
	var commits []commit
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case strings.HasSuffix(filepath.ToSlash(path), "/"+first):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			commits = append(commits, commit{filepath.ToSlash(rel), b})
		case strings.HasSuffix(path, ".tar.zst"):
			cs, err := schemaTestFirstCommitsInArchive(path, first)
			if err != nil {
				return err
			}
			for n, b := range cs {
				commits = append(commits, commit{filepath.ToSlash(rel) + ":" + n, b})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(commits) == 0 {
		t.Fatalf("no %s found under %s", first, root)
	}
	outcome := map[string]string{}
	for _, c := range commits {
		actions, err := ParseActions(c.data)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var md *Metadata
		for _, a := range actions {
			if a.MetaData != nil {
				md = a.MetaData
			}
		}
		if md == nil {
			t.Logf("%s: no metaData in the first commit", c.name)
			continue
		}
		s, err := ParseSchema(md.SchemaString)
		if err != nil {
			if !errors.Is(err, ErrUnsupportedFeature) {
				t.Errorf("%s: %v", c.name, err)
			} else {
				t.Logf("%s: refused: %v", c.name, err)
			}
			outcome[c.name] = "refused"
			continue
		}
		t.Logf("%s: ok: %s", c.name, s)
		outcome[c.name] = "ok"
		schemaTestRoundTrips(t, s)
		for _, f := range s.Fields {
			if _, err := DuckDBType(f.Type); err != nil {
				t.Errorf("%s: DuckDBType(%s): %v", c.name, f.Type, err)
			}
		}
		for _, pc := range md.PartitionColumns {
			if s.Field(pc) == nil {
				t.Errorf("%s: partition column %q not in the schema", c.name, pc)
			}
		}
	}
	t.Logf("%d first commits checked", len(commits))
	for name, want := range map[string]string{
		"table-with-geo/" + first:                              "refused",
		"void-column/" + first:                                 "refused",
		"basic-decimal-table/" + first:                         "ok",
		"parquet_row_group_skipping/" + first:                  "ok",
		"partition_cm/id/" + first:                             "ok",
		"stats-writing-all-types/delta/" + first:               "ok",
		"data-reader-timestamp_ntz/" + first:                   "ok",
		"v2-parquet-sidecars-struct-stats-only/" + first:       "ok",
		"external-table-different-nullability/" + first:        "ok",
		"partitioned_with_materialize_feature/" + first:        "ok",
		"v1-multi-part-partitioned-struct-stats-only/" + first: "ok",
	} {
		if got, ok := outcome[name]; ok && got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// schemaTestFirstCommitsInArchive returns the first commit of every table in
// a .tar.zst archive, keyed by path inside the archive.
func schemaTestFirstCommitsInArchive(path, first string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	out := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg && strings.HasSuffix(h.Name, "/"+first) {
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			out[h.Name] = b
		}
	}
}

func TestSchemaDuckDBQuoting(t *testing.T) {
	typ := &StructType{Fields: []*StructField{
		{Name: `a"b`, Type: TypeLong},
		{Name: `""`, Type: TypeLong},
		{Name: "with space.and.dots", Type: TypeLong},
		{Name: "ünï", Type: TypeLong},
	}}
	got, err := DuckDBType(typ)
	want := `STRUCT("a""b" BIGINT, """""" BIGINT, "with space.and.dots" BIGINT, "ünï" BIGINT)`
	if err != nil || got != want {
		t.Errorf("DuckDBType = %s, %v\nwant %s", got, err, want)
	}
}

func schemaTestStr(s string) *string { return &s }

func TestPartitionValueParse(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	dec := DecimalType{12, 5}
	cases := []struct {
		typ  DataType
		in   *string
		want any
		err  bool
	}{
		// nulls: a missing value and "" are null for every type
		{TypeLong, nil, nil, false},
		{TypeString, nil, nil, false},
		{TypeString, schemaTestStr(""), nil, false},
		{TypeInteger, schemaTestStr(""), nil, false},
		{TypeTimestamp, schemaTestStr(""), nil, false},
		{dec, schemaTestStr(""), nil, false},
		{TypeBinary, schemaTestStr(""), nil, false},

		{TypeByte, schemaTestStr("127"), int8(127), false},
		{TypeByte, schemaTestStr("-128"), int8(-128), false},
		{TypeByte, schemaTestStr("128"), nil, true},
		{TypeShort, schemaTestStr("-32768"), int16(-32768), false},
		{TypeShort, schemaTestStr("32768"), nil, true},
		{TypeInteger, schemaTestStr("2147483647"), int32(2147483647), false},
		{TypeInteger, schemaTestStr("+7"), int32(7), false},
		{TypeInteger, schemaTestStr("2147483648"), nil, true},
		{TypeInteger, schemaTestStr("1.0"), nil, true},
		{TypeInteger, schemaTestStr(" 1"), nil, true},
		{TypeLong, schemaTestStr("-9223372036854775808"), int64(math.MinInt64), false},
		{TypeLong, schemaTestStr("9223372036854775807"), int64(math.MaxInt64), false},
		{TypeLong, schemaTestStr("9223372036854775808"), nil, true},
		{TypeLong, schemaTestStr("abc"), nil, true},

		{TypeFloat, schemaTestStr("1.5"), float32(1.5), false},
		{TypeFloat, schemaTestStr("3.4028235E38"), float32(math.MaxFloat32), false},
		{TypeFloat, schemaTestStr("1e39"), nil, true},
		{TypeFloat, schemaTestStr("NaN"), float32(math.NaN()), false},
		{TypeFloat, schemaTestStr("-Infinity"), float32(math.Inf(-1)), false},
		{TypeDouble, schemaTestStr("Infinity"), math.Inf(1), false},
		{TypeDouble, schemaTestStr("-0.0"), math.Copysign(0, -1), false},
		{TypeDouble, schemaTestStr("4.9E-324"), 4.9e-324, false},
		{TypeDouble, schemaTestStr("1.7976931348623157E308"), math.MaxFloat64, false},
		{TypeDouble, schemaTestStr("NaN"), math.NaN(), false},
		{TypeDouble, schemaTestStr("x"), nil, true},

		{TypeBoolean, schemaTestStr("true"), true, false},
		{TypeBoolean, schemaTestStr("false"), false, false},
		{TypeBoolean, schemaTestStr("TRUE"), true, false},
		{TypeBoolean, schemaTestStr("1"), nil, true},

		{TypeString, schemaTestStr("a b/c=d%20 ü"), "a b/c=d%20 ü", false},
		{TypeString, schemaTestStr(" "), " ", false},
		{TypeBinary, schemaTestStr("\x01\x02\x03\xff"), []byte{1, 2, 3, 0xff}, false},

		{TypeDate, schemaTestStr("2021-01-01"), utc(2021, 1, 1, 0, 0, 0, 0), false},
		{TypeDate, schemaTestStr("1970-01-01"), utc(1970, 1, 1, 0, 0, 0, 0), false},
		{TypeDate, schemaTestStr("0001-01-01"), utc(1, 1, 1, 0, 0, 0, 0), false},
		{TypeDate, schemaTestStr("9999-12-31"), utc(9999, 12, 31, 0, 0, 0, 0), false},
		{TypeDate, schemaTestStr("2020-02-29"), utc(2020, 2, 29, 0, 0, 0, 0), false},
		{TypeDate, schemaTestStr("2021-02-29"), nil, true},
		{TypeDate, schemaTestStr("2021-1-1"), nil, true},
		{TypeDate, schemaTestStr("2021-01-01 00:00:00"), nil, true},

		{TypeTimestamp, schemaTestStr("2021-01-01 00:00:00"), utc(2021, 1, 1, 0, 0, 0, 0), false},
		{TypeTimestamp, schemaTestStr("2021-01-01 00:00:00.123456"), utc(2021, 1, 1, 0, 0, 0, 123456000), false},
		{TypeTimestamp, schemaTestStr("2021-01-01 00:00:00.1"), utc(2021, 1, 1, 0, 0, 0, 100000000), false},
		{TypeTimestamp, schemaTestStr("2021-01-01T00:00:00.000000Z"), utc(2021, 1, 1, 0, 0, 0, 0), false},
		{TypeTimestamp, schemaTestStr("1971-07-22T03:06:40.000000Z"), utc(1971, 7, 22, 3, 6, 40, 0), false},
		{TypeTimestamp, schemaTestStr("2021-01-01T01:30:00.5+01:30"), utc(2021, 1, 1, 0, 0, 0, 500000000), false},
		{TypeTimestamp, schemaTestStr("2021-01-01 00:00:00-0800"), utc(2021, 1, 1, 8, 0, 0, 0), false},
		{TypeTimestamp, schemaTestStr("2021-01-01T00:00:00"), utc(2021, 1, 1, 0, 0, 0, 0), false},
		{TypeTimestamp, schemaTestStr("1969-12-31 23:59:59.999999"), utc(1969, 12, 31, 23, 59, 59, 999999000), false},
		{TypeTimestamp, schemaTestStr("2021-01-01"), nil, true},
		{TypeTimestamp, schemaTestStr("2021-01-01 25:00:00"), nil, true},
		{TypeTimestamp, schemaTestStr("2021-01-01 00:00:00 UTC"), nil, true},

		{TypeTimestampNTZ, schemaTestStr("2013-07-05 17:01:00.123456"), utc(2013, 7, 5, 17, 1, 0, 123456000), false},
		{TypeTimestampNTZ, schemaTestStr("2021-11-18T02:30:00"), utc(2021, 11, 18, 2, 30, 0, 0), false},
		{TypeTimestampNTZ, schemaTestStr("2021-11-18T02:30:00Z"), nil, true},
		{TypeTimestampNTZ, schemaTestStr("2021-11-18 02:30:00+01:00"), nil, true},

		{dec, schemaTestStr("234.00000"), "234.00000", false},
		{dec, schemaTestStr("0.00004"), "0.00004", false},
		{dec, schemaTestStr("-2342342.23423"), "-2342342.23423", false},
		{dec, schemaTestStr("1.5"), "1.50000", false},
		{dec, schemaTestStr("+001.5"), "1.50000", false},
		{dec, schemaTestStr("-0"), "0.00000", false},
		{dec, schemaTestStr("-0.000"), "0.00000", false},
		{dec, schemaTestStr("0E-10"), "0.00000", false},
		{dec, schemaTestStr("1E2"), "100.00000", false},
		{dec, schemaTestStr("1.5e-5"), nil, true}, // 0.000015 needs 6 fractional digits
		{dec, schemaTestStr("1.5e-4"), "0.00015", false},
		{dec, schemaTestStr("1234567.12345"), "1234567.12345", false},
		{dec, schemaTestStr("12345678"), nil, true},
		{dec, schemaTestStr("1.123456"), nil, true},
		{dec, schemaTestStr("1.123450000"), "1.12345", false},
		{dec, schemaTestStr(".5"), "0.50000", false},
		{dec, schemaTestStr("5."), "5.00000", false},
		{dec, schemaTestStr("."), nil, true},
		{dec, schemaTestStr("1e"), nil, true},
		{dec, schemaTestStr("1e99999"), nil, true},
		{dec, schemaTestStr("abc"), nil, true},
		{dec, schemaTestStr("1,5"), nil, true},
		{dec, schemaTestStr("NaN"), nil, true},
		{DecimalType{10, 0}, schemaTestStr("5.0"), "5", false},
		{DecimalType{10, 0}, schemaTestStr("-9999999999"), "-9999999999", false},
		{DecimalType{38, 38}, schemaTestStr("-0.1"), "-0.10000000000000000000000000000000000000", false},
	}
	opts := cmp.Options{cmpopts.EquateNaNs()}
	for _, c := range cases {
		in := "<nil>"
		if c.in != nil {
			in = *c.in
		}
		got, err := ParsePartitionValue(c.typ, c.in)
		if c.err {
			if err == nil {
				t.Errorf("ParsePartitionValue(%s, %q) = %#v, want an error", c.typ, in, got)
			} else if !errors.Is(err, ErrCorruptLog) {
				t.Errorf("ParsePartitionValue(%s, %q) = %v, want ErrCorruptLog", c.typ, in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParsePartitionValue(%s, %q): %v", c.typ, in, err)
			continue
		}
		if d := cmp.Diff(c.want, got, opts); d != "" {
			t.Errorf("ParsePartitionValue(%s, %q) (-want +got):\n%s", c.typ, in, d)
		}
		if ts, ok := got.(time.Time); ok && ts.Location() != time.UTC {
			t.Errorf("ParsePartitionValue(%s, %q) location %v, want UTC", c.typ, in, ts.Location())
		}
	}
	// -0.0 keeps its sign.
	if got, _ := ParsePartitionValue(TypeDouble, schemaTestStr("-0.0")); !math.Signbit(got.(float64)) {
		t.Error("-0.0 lost its sign")
	}
	for _, typ := range []DataType{&ArrayType{ElementType: TypeLong}, &MapType{KeyType: TypeLong, ValueType: TypeLong}, &StructType{}, PrimitiveType("void"), DecimalType{40, 1}} {
		if _, err := ParsePartitionValue(typ, schemaTestStr("1")); !errors.Is(err, ErrUnsupportedFeature) {
			t.Errorf("ParsePartitionValue(%s): %v, want ErrUnsupportedFeature", typ, err)
		}
	}
	if _, err := ParsePartitionValue(nil, schemaTestStr("1")); err == nil {
		t.Error("ParsePartitionValue(nil type): want an error")
	}
}

func TestPartitionValueFormat(t *testing.T) {
	ts := time.Date(2021, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", 3600))
	dec := DecimalType{12, 5}
	cases := []struct {
		typ  DataType
		in   any
		want *string
		err  bool
	}{
		{TypeLong, nil, nil, false},
		{TypeString, nil, nil, false},
		{TypeString, "", nil, false},
		{TypeBinary, []byte{}, nil, false},
		{TypeByte, int8(-128), schemaTestStr("-128"), false},
		{TypeByte, 127, schemaTestStr("127"), false},
		{TypeByte, 128, nil, true},
		{TypeByte, uint8(200), nil, true},
		{TypeShort, int16(-32768), schemaTestStr("-32768"), false},
		{TypeShort, -32769, nil, true},
		{TypeInteger, int32(math.MaxInt32), schemaTestStr("2147483647"), false},
		{TypeInteger, int64(math.MaxInt32) + 1, nil, true},
		{TypeLong, int64(math.MinInt64), schemaTestStr("-9223372036854775808"), false},
		{TypeLong, uint64(math.MaxInt64), schemaTestStr("9223372036854775807"), false},
		{TypeLong, uint64(math.MaxUint64), nil, true},
		{TypeLong, "1", nil, true},
		{TypeLong, 1.0, nil, true},
		{TypeFloat, float32(1.1), schemaTestStr("1.1"), false},
		{TypeFloat, 0.1, schemaTestStr("0.1"), false},
		{TypeFloat, 1e39, nil, true},
		{TypeFloat, float32(math.Inf(1)), schemaTestStr("Infinity"), false},
		{TypeDouble, 0.1, schemaTestStr("0.1"), false},
		{TypeDouble, 1e21, schemaTestStr("1e+21"), false},
		{TypeDouble, math.NaN(), schemaTestStr("NaN"), false},
		{TypeDouble, math.Inf(-1), schemaTestStr("-Infinity"), false},
		{TypeDouble, math.MaxFloat64, schemaTestStr("1.7976931348623157e+308"), false},
		{TypeDouble, 5e-324, schemaTestStr("5e-324"), false},
		{TypeDouble, 1, nil, true},
		{TypeBoolean, true, schemaTestStr("true"), false},
		{TypeBoolean, false, schemaTestStr("false"), false},
		{TypeBoolean, "true", nil, true},
		{TypeString, "a/b c", schemaTestStr("a/b c"), false},
		{TypeString, []byte("x"), nil, true},
		{TypeBinary, []byte{1, 2, 0xff}, schemaTestStr("\x01\x02\xff"), false},
		{TypeBinary, "raw", schemaTestStr("raw"), false},
		{TypeDate, ts, schemaTestStr("2021-01-02"), false},
		{TypeDate, time.Date(2021, 1, 2, 0, 30, 0, 0, time.FixedZone("Y", 7200)), schemaTestStr("2021-01-02"), false},
		{TypeDate, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), nil, true},
		{TypeDate, "2021-01-01", nil, true},
		{TypeTimestamp, ts, schemaTestStr("2021-01-02T02:04:05.123456Z"), false},
		{TypeTimestamp, time.Unix(0, 0), schemaTestStr("1970-01-01T00:00:00.000000Z"), false},
		{TypeTimestamp, time.Time{}, schemaTestStr("0001-01-01T00:00:00.000000Z"), false},
		{TypeTimestampNTZ, ts, schemaTestStr("2021-01-02 03:04:05.123456"), false},
		{TypeTimestampNTZ, time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC), schemaTestStr("2021-01-01 00:00:00.000000"), false},
		{dec, "1.5", schemaTestStr("1.50000"), false},
		{dec, 42, schemaTestStr("42.00000"), false},
		{dec, uint64(7), schemaTestStr("7.00000"), false},
		{dec, "1.123456", nil, true},
		{dec, 1.5, nil, true},
		{&ArrayType{ElementType: TypeLong}, []int64{1}, nil, true},
	}
	for _, c := range cases {
		got, err := FormatPartitionValue(c.typ, c.in)
		if c.err {
			if err == nil {
				t.Errorf("FormatPartitionValue(%s, %#v) = %v, want an error", c.typ, c.in, schemaTestDeref(got))
			}
			continue
		}
		if err != nil {
			t.Errorf("FormatPartitionValue(%s, %#v): %v", c.typ, c.in, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("FormatPartitionValue(%s, %#v) (-want +got):\n%s", c.typ, c.in, d)
		}
	}
}

func schemaTestDeref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestPartitionValueRoundTrip checks Parse(Format(v)) == v and that
// Format(Parse(s)) is a fixed point.
func TestPartitionValueRoundTrip(t *testing.T) {
	cases := []struct {
		typ DataType
		v   any
	}{
		{TypeByte, int8(-1)}, {TypeShort, int16(300)}, {TypeInteger, int32(-7)}, {TypeLong, int64(math.MaxInt64)},
		{TypeFloat, float32(0.1)}, {TypeFloat, float32(math.SmallestNonzeroFloat32)}, {TypeFloat, float32(math.Inf(-1))},
		{TypeDouble, 0.1}, {TypeDouble, math.SmallestNonzeroFloat64}, {TypeDouble, -1e300}, {TypeDouble, math.NaN()},
		{TypeBoolean, true}, {TypeString, "x=y/z"}, {TypeBinary, []byte{0, 1, 0x80}},
		{TypeDate, time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)}, {TypeDate, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{TypeTimestamp, time.Date(2021, 6, 1, 12, 0, 0, 1000, time.UTC)}, {TypeTimestamp, time.Date(1900, 1, 1, 0, 0, 0, 999999000, time.UTC)},
		{TypeTimestampNTZ, time.Date(2021, 6, 1, 12, 0, 0, 654321000, time.UTC)},
		{DecimalType{38, 0}, "99999999999999999999999999999999999999"}, {DecimalType{5, 2}, "-123.45"}, {DecimalType{3, 3}, "0.001"},
	}
	for _, c := range cases {
		s, err := FormatPartitionValue(c.typ, c.v)
		if err != nil || s == nil {
			t.Errorf("FormatPartitionValue(%s, %#v) = %v, %v", c.typ, c.v, s, err)
			continue
		}
		back, err := ParsePartitionValue(c.typ, s)
		if err != nil {
			t.Errorf("ParsePartitionValue(%s, %q): %v", c.typ, *s, err)
			continue
		}
		if d := cmp.Diff(c.v, back, cmpopts.EquateNaNs()); d != "" {
			t.Errorf("%s %q round trip (-want +got):\n%s", c.typ, *s, d)
		}
		s2, err := FormatPartitionValue(c.typ, back)
		if err != nil || *s2 != *s {
			t.Errorf("%s: format not stable: %q then %v (%v)", c.typ, *s, s2, err)
		}
	}
}

// schemaTestSeeds seed the fuzzer with real and tricky schemas.
var schemaTestSeeds = []string{
	schemaTestProtocolExample,
	`{"type":"struct","fields":[]}`,
	`{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-e0571b78"}}]}`,
	`{"type":"struct","fields":[{"name":"a","type":"decimal","nullable":true,"metadata":{}},{"name":"b","type":"decimal( 12 , 3 )","metadata":null}]}`,
	`{"type":"struct","fields":[{"name":"m","type":{"type":"map","keyType":{"type":"struct","fields":[{"name":"k","type":"date","nullable":false,"metadata":{}}]},"valueType":{"type":"array","elementType":"timestamp_ntz","containsNull":false},"valueContainsNull":false},"nullable":false,"metadata":{"x":[1,{"y":null}],"z":1e400}}]}`,
	`{"type":"struct","fields":[{"name":"geom","type":"geometry(OGC:CRS84)","nullable":true,"metadata":{}}]}`,
	`{"type":"struct","fields":[{"name":"a","type":"long"},{"name":"A","type":"long"}]}`,
	`{"type":"struct","fields":[{"name":"\ud800\"","type":"binary","nullable":true,"metadata":{"<&>":"\u2028"}}]}`,
}

func FuzzParseSchema(f *testing.F) {
	for _, s := range schemaTestSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSchema(in)
		if err != nil {
			if !errors.Is(err, ErrCorruptLog) && !errors.Is(err, ErrUnsupportedFeature) {
				t.Fatalf("ParseSchema error of an unexpected kind: %v", err)
			}
			return
		}
		js, err := s.JSON()
		if err != nil {
			t.Fatalf("JSON of a parsed schema: %v", err)
		}
		back, err := ParseSchema(js)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", js, err)
		}
		if d := cmp.Diff(s, back); d != "" {
			t.Fatalf("re-parse differs (-first +second):\n%s", d)
		}
		if js2, err := back.JSON(); err != nil || js2 != js {
			t.Fatalf("re-encode differs: %s vs %s (%v)", js, js2, err)
		}
		as, err := ToArrowSchema(s)
		if err != nil {
			t.Fatalf("ToArrowSchema of a parsed schema: %v", err)
		}
		fa, err := FromArrowSchema(as)
		if err != nil {
			t.Fatalf("FromArrowSchema(ToArrowSchema): %v", err)
		}
		if d := cmp.Diff(s, fa); d != "" {
			t.Fatalf("Arrow round trip differs (-delta +arrow):\n%s", d)
		}
		for _, fld := range s.Fields {
			_, _ = DuckDBType(fld.Type) // must not panic
		}
	})
}
