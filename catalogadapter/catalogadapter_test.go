package catalogadapter

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/clocktest"
)

const secretValue = "s3cr3t-t0k3n"

// tokenDoc carries a secret through encoding/xml, which uses MarshalText.
type tokenDoc struct {
	XMLName xml.Name `xml:"doc"`
	Token   Secret   `xml:"token,attr"`
}

func TestSecretRedaction(t *testing.T) {
	s := NewSecret(secretValue)
	cred := Credential{Token: s, ExpiresAt: time.Unix(0, 0), Scope: ScopeTableRead}
	sc := SecurityContext{Credential: cred}
	var forms []string
	for _, verb := range []string{"%s", "%v", "%+v", "%#v", "%q", "%x", "%X", "%d", "%10.3s", "%T"} {
		forms = append(forms, fmt.Sprintf(verb, s), fmt.Sprintf(verb, &s), fmt.Sprintf(verb, cred), fmt.Sprintf(verb, sc), fmt.Sprintf(verb, []Secret{s}))
	}
	forms = append(forms, fmt.Sprint(s), fmt.Sprintln(cred), s.String(), s.GoString(), fmt.Errorf("auth with %v failed", s).Error())
	for _, v := range []any{s, &s, cred, sc, map[string]Secret{"k": s}, map[Secret]int{s: 1}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		forms = append(forms, string(b))
	}
	text, err := s.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	x, err := xml.Marshal(tokenDoc{Token: s})
	if err != nil {
		t.Fatal(err)
	}
	forms = append(forms, string(text), string(x))
	hexValue := fmt.Sprintf("%x", secretValue)
	for _, f := range forms {
		if strings.Contains(f, secretValue) || strings.Contains(strings.ToLower(f), hexValue) {
			t.Errorf("secret leaked: %s", f)
		}
	}
	if !strings.Contains(fmt.Sprint(s), "REDACTED") || !strings.Contains(string(x), "REDACTED") {
		t.Errorf("redacted forms do not say so: %s %s", fmt.Sprint(s), x)
	}
	if s.Reveal() != secretValue || s.IsZero() || !NewSecret("").IsZero() {
		t.Error("Reveal/IsZero")
	}
}

func TestParseTransform(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Transform
		ok   bool
	}{
		{"identity", Transform{Kind: Identity}, true},
		{" DAY ", Transform{Kind: Day}, true},
		{"year", Transform{Kind: Year}, true},
		{"month", Transform{Kind: Month}, true},
		{"hour", Transform{Kind: Hour}, true},
		{"bucket(16)", Transform{Kind: Bucket, Param: 16}, true},
		{"Bucket( 4 )", Transform{Kind: Bucket, Param: 4}, true},
		{"truncate(10)", Transform{Kind: Truncate, Param: 10}, true},
		{"bucket(0)", Transform{}, false},
		{"bucket(-1)", Transform{}, false},
		{"bucket(+3)", Transform{}, false},
		{"bucket(016)", Transform{}, false},
		{"bucket(1x)", Transform{}, false},
		{"bucket()", Transform{}, false},
		{"bucket(99999999999999999999)", Transform{}, false},
		{"bucket", Transform{}, false},
		{"void", Transform{}, false},
		{"", Transform{}, false},
	} {
		got, err := ParseTransform(tc.in)
		if tc.ok != (err == nil) {
			t.Errorf("ParseTransform(%q) error = %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if !tc.ok {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("ParseTransform(%q) error %v does not wrap ErrInvalid", tc.in, err)
			}
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("ParseTransform(%q) (-want +got):\n%s", tc.in, d)
		}
	}
}

// FuzzParseTransform checks that ParseTransform never panics, that what it
// accepts is well formed, and that String reads back to the same value.
func FuzzParseTransform(f *testing.F) {
	for _, s := range []string{"identity", "day", "bucket(16)", "truncate( 3 )", "bucket(0)", "bucket(", "truncate(1e3)", "BUCKET(7)", "bucket(٣)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := ParseTransform(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseTransform(%q): error %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		switch tr.Kind {
		case Bucket, Truncate:
			if tr.Param <= 0 {
				t.Fatalf("ParseTransform(%q) = %+v: parameter must be positive", s, tr)
			}
		case Identity, Year, Month, Day, Hour:
			if tr.Param != 0 {
				t.Fatalf("ParseTransform(%q) = %+v: unexpected parameter", s, tr)
			}
		default:
			t.Fatalf("ParseTransform(%q) = %+v: unknown kind", s, tr)
		}
		back, err := ParseTransform(tr.String())
		if err != nil || back != tr {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v, %v", s, tr, tr.String(), back, err)
		}
	})
}

func TestTableIdent(t *testing.T) {
	for _, tc := range []struct {
		id   TableIdent
		str  string
		okay bool
	}{
		{TableIdent{Name: "t"}, "t", true},
		{TableIdent{Catalog: "c", Namespace: []string{"a", "b"}, Name: "t"}, "c.a.b.t", true},
		{TableIdent{Name: "/data/lake/orders"}, "/data/lake/orders", true},
		{TableIdent{}, "", false},
		{TableIdent{Name: "  \t"}, "  \t", false},
		{TableIdent{Catalog: "c", Name: ""}, "c.", false},
		{TableIdent{Namespace: []string{"a", ""}, Name: "t"}, "a..t", false},
		{TableIdent{Name: "a\x00b"}, "a\x00b", false},
		{TableIdent{Catalog: "c\x00", Name: "t"}, "c\x00.t", false},
	} {
		if got := tc.id.String(); got != tc.str {
			t.Errorf("String() = %q, want %q", got, tc.str)
		}
		err := tc.id.Validate()
		if tc.okay != (err == nil) {
			t.Errorf("Validate(%+v) = %v, want ok=%v", tc.id, err, tc.okay)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate(%+v) = %v, does not wrap ErrInvalid", tc.id, err)
		}
	}
}

func TestCredentialCache(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktest.New(t0)
	minted := 0
	ttl := 10 * time.Minute
	src := func(_ context.Context, id TableIdent) (Credential, error) {
		minted++
		return Credential{Token: NewSecret(fmt.Sprintf("%s#%d", id.Name, minted)), ExpiresAt: clk.Now().Add(ttl), Scope: ScopeTableRead}, nil
	}
	c := NewCredentialCache(src, clk.Now, time.Minute)
	a := TableIdent{Name: "a"}
	get := func(id TableIdent) Credential {
		t.Helper()
		cred, err := c.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !cred.Valid(clk.Now()) {
			t.Fatalf("expired credential served at %v: expires %v", clk.Now(), cred.ExpiresAt)
		}
		return cred
	}
	first := get(a).Token.Reveal()
	clk.Advance(8 * time.Minute)
	if got := get(a).Token.Reveal(); got != first {
		t.Errorf("renewed early: %s", got)
	}
	// Within the margin of expiry: renewed.
	clk.Advance(90 * time.Second)
	second := get(a).Token.Reveal()
	if second == first {
		t.Error("not renewed within the margin")
	}
	// Tables have their own credentials.
	if get(TableIdent{Name: "b"}).Token.Reveal() == second {
		t.Error("tables share a credential")
	}
	// Walk the clock in odd steps: never an expired credential.
	for i := 0; i < 200; i++ {
		clk.Advance(time.Duration(i%7) * 37 * time.Second)
		get(a)
	}

	// A source that hands out expired credentials is an error, not a leak.
	clk2 := clocktest.New(t0)
	expired := NewCredentialCache(func(context.Context, TableIdent) (Credential, error) {
		return Credential{Token: NewSecret("old"), ExpiresAt: clk2.Now().Add(-time.Second)}, nil
	}, clk2.Now, time.Minute)
	if _, err := expired.Get(ctx, a); err == nil {
		t.Error("expired credential served")
	}
	// One that expires inside the margin is served (still valid) but not cached.
	short := 0
	shortCache := NewCredentialCache(func(context.Context, TableIdent) (Credential, error) {
		short++
		return Credential{Token: NewSecret("short"), ExpiresAt: clk2.Now().Add(30 * time.Second)}, nil
	}, clk2.Now, time.Minute)
	for range 2 {
		if cred, err := shortCache.Get(ctx, a); err != nil || !cred.Valid(clk2.Now()) {
			t.Fatalf("short credential: %v %v", cred, err)
		}
	}
	if short != 2 {
		t.Errorf("short-lived credential cached: minted %d times", short)
	}
	// A credential without expiry is kept.
	never := 0
	neverCache := NewCredentialCache(func(context.Context, TableIdent) (Credential, error) {
		never++
		return Credential{Token: NewSecret("static")}, nil
	}, clk2.Now, time.Minute)
	for range 3 {
		clk2.Advance(24 * time.Hour)
		if _, err := neverCache.Get(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if never != 1 {
		t.Errorf("static credential minted %d times", never)
	}
	// Source errors pass through.
	boom := errors.New("boom")
	errCache := NewCredentialCache(func(context.Context, TableIdent) (Credential, error) { return Credential{}, boom }, nil, 0)
	if _, err := errCache.Get(ctx, a); !errors.Is(err, boom) {
		t.Errorf("source error: %v", err)
	}
}
