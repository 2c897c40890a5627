package objectstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"

	"github.com/lakesql/lakesql/internal/clocktest"
	"github.com/lakesql/lakesql/internal/s3test"
	"github.com/lakesql/lakesql/internal/storageloc"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// Tests of the pure parts (options, retry policy, breaker) run
// without a disk or a server; the Store is tested against versitygw, a
// real S3 server, which the outage test kills and restarts.

// ---------------------------------------------------------------------------
// Options

const (
	testSecret = "s3cr3t-VALUE-never-shown"
	testToken  = "t0k3n-VALUE-never-shown"
)

func TestFromProperties(t *testing.T) {
	props := map[string]string{
		storageloc.KeyEndpoint:        "http://127.0.0.1:7070",
		storageloc.KeyRegion:          "eu-west-3",
		storageloc.KeyPathStyle:       "true",
		storageloc.KeyAccessKeyID:     "AKID",
		storageloc.KeySecretAccessKey: testSecret,
		storageloc.KeySessionToken:    testToken,
		storageloc.KeyMaxAttempts:     "7",
		storageloc.KeyMaxRetryTime:    "45s",
		storageloc.KeyCacheMaxBytes:   "2GB",
		"path":                        "ignored: not a storage option",
		"delta.appendOnly":            "true",
	}
	got, err := FromProperties(props)
	if err != nil {
		t.Fatal(err)
	}
	want := Options{
		Endpoint: "http://127.0.0.1:7070", Region: "eu-west-3", PathStyle: true,
		AccessKeyID: "AKID", SecretAccessKey: testSecret, SessionToken: testToken,
		Retry:         RetryPolicy{MaxAttempts: 7, MaxTime: 45 * time.Second},
		CacheMaxBytes: 2 << 30,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FromProperties = %+v, want %+v", got, want)
	}
	if o, err := FromProperties(nil); err != nil || !reflect.DeepEqual(o, Options{}) {
		t.Errorf("FromProperties(nil) = %+v, %v", o, err)
	}
	for _, k := range storageloc.Keys() {
		if !strings.HasPrefix(k, "storage.") {
			t.Errorf("key %q lacks the storage. prefix", k)
		}
	}
	if !sort.StringsAreSorted(storageloc.Keys()) || len(storageloc.Keys()) != 9 {
		t.Errorf("Keys() = %v, want the 9 keys sorted", storageloc.Keys())
	}
	for k, secret := range map[string]bool{
		storageloc.KeySecretAccessKey: true, storageloc.KeySessionToken: true,
		storageloc.KeyAccessKeyID: false, storageloc.KeyEndpoint: false, storageloc.KeyRegion: false,
	} {
		if storageloc.IsSecret(k) != secret {
			t.Errorf("IsSecret(%q) = %v", k, !secret)
		}
	}
}

func TestFromPropertiesRefuses(t *testing.T) {
	cases := []struct {
		key, value string
		want       string // in the error
	}{
		{"storage.endpont", "http://x", "unknown storage option"},
		{"storage.secret_acess_key", testSecret, "unknown storage option"},
		{"storage.", "x", "unknown storage option"},
		{storageloc.KeyEndpoint, "ftp://host", "http or https"},
		{storageloc.KeyEndpoint, "127.0.0.1:7070", "http or https"},
		{storageloc.KeyEndpoint, "http://", "http or https"},
		{storageloc.KeyEndpoint, "http://[::1", "http or https"},
		{storageloc.KeyPathStyle, "maybe", storageloc.KeyPathStyle},
		{storageloc.KeyMaxAttempts, "0", "at least 1"},
		{storageloc.KeyMaxAttempts, "-3", "at least 1"},
		{storageloc.KeyMaxAttempts, "three", storageloc.KeyMaxAttempts},
		{storageloc.KeyMaxRetryTime, "0s", "positive"},
		{storageloc.KeyMaxRetryTime, "-5s", "positive"},
		{storageloc.KeyMaxRetryTime, "soon", "duration"},
		{storageloc.KeyMaxRetryTime, "30", "duration"},
		{storageloc.KeyCacheMaxBytes, "lots", "size"},
		{storageloc.KeyCacheMaxBytes, "0", "size"},
	}
	for _, c := range cases {
		// The secrets ride along in every case: whatever goes wrong, they
		// must not show up.
		props := map[string]string{
			storageloc.KeyAccessKeyID: "AKID", storageloc.KeySecretAccessKey: testSecret, storageloc.KeySessionToken: testToken,
			c.key: c.value,
		}
		o, err := FromProperties(props)
		if err == nil {
			t.Errorf("FromProperties with %s = %q succeeded", c.key, c.value)
			continue
		}
		if !reflect.DeepEqual(o, Options{}) {
			t.Errorf("FromProperties with %s = %q returned options with the error: %+v", c.key, c.value, o)
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, c.key) {
			t.Errorf("FromProperties with %s = %q: %v; want it to name the key and say %q", c.key, c.value, err, c.want)
		}
		assertNoSecret(t, msg)

		cerr := storageloc.CheckOption(c.key, c.value)
		if cerr == nil {
			t.Errorf("storageloc.CheckOption(%s, %q) accepted it", c.key, c.value)
			continue
		}
		assertNoSecret(t, cerr.Error())
	}

	// Credentials go in pairs; the complaint names keys, not values.
	for _, props := range []map[string]string{
		{storageloc.KeyAccessKeyID: "AKID"},
		{storageloc.KeySecretAccessKey: testSecret},
		{storageloc.KeySecretAccessKey: testSecret, storageloc.KeySessionToken: testToken},
	} {
		_, err := FromProperties(props)
		if err == nil || !strings.Contains(err.Error(), "go together") {
			t.Errorf("FromProperties(%v) = %v, want the pair refused", keysOf(props), err)
			continue
		}
		assertNoSecret(t, err.Error())
	}

	for _, c := range [][2]string{
		{storageloc.KeyEndpoint, "https://s3.eu-west-3.amazonaws.com"}, {storageloc.KeyRegion, "us-east-1"},
		{storageloc.KeyPathStyle, "false"}, {storageloc.KeyAccessKeyID, "AKID"}, {storageloc.KeySecretAccessKey, testSecret},
		{storageloc.KeySessionToken, testToken}, {storageloc.KeyMaxAttempts, "1"}, {storageloc.KeyMaxRetryTime, "2m"}, {storageloc.KeyCacheMaxBytes, "512MiB"},
	} {
		if err := storageloc.CheckOption(c[0], c[1]); err != nil {
			t.Errorf("storageloc.CheckOption(%s, %q): %v", c[0], c[1], err)
		}
	}
}

func assertNoSecret(t *testing.T, msg string) {
	t.Helper()
	for _, s := range []string{testSecret, testToken} {
		if strings.Contains(msg, s) {
			t.Errorf("error message shows a secret: %s", msg)
		}
	}
}

func keysOf(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// ---------------------------------------------------------------------------
// Retry policy

// codedErrors returns real gocloud errors with the codes the store answers
// with (not found, precondition failed), made by an in-memory bucket.
func codedErrors(t *testing.T) (notFound, precondition error) {
	t.Helper()
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	_, notFound = b.ReadAll(ctx, "missing")
	if gcerrors.Code(notFound) != gcerrors.NotFound {
		t.Fatalf("memblob read of a missing key: %v (code %v)", notFound, gcerrors.Code(notFound))
	}
	opts := &blob.WriterOptions{IfNotExist: true}
	if err := b.WriteAll(ctx, "k", []byte("1"), opts); err != nil {
		t.Fatal(err)
	}
	precondition = b.WriteAll(ctx, "k", []byte("2"), opts)
	if gcerrors.Code(precondition) != gcerrors.FailedPrecondition {
		t.Fatalf("memblob second conditional write: %v (code %v)", precondition, gcerrors.Code(precondition))
	}
	return notFound, precondition
}

// errFlaky is a transport failure: retryable, and a fault.
var errFlaky = errors.New("connection reset by peer")

// quiet is a breaker that never opens within a test.
func quiet() *Breaker { return NewBreaker(BreakerPolicy{Threshold: 1 << 20}) }

// fastPolicy retries quickly: the tests count calls, never time them.
func fastPolicy(attempts int) RetryPolicy {
	return RetryPolicy{MaxAttempts: attempts, BaseDelay: 100 * time.Microsecond, MaxDelay: time.Millisecond, MaxTime: time.Minute}.withDefaults()
}

func TestRetryPolicyDefaults(t *testing.T) {
	got := RetryPolicy{}.withDefaults()
	want := RetryPolicy{MaxAttempts: 5, BaseDelay: 50 * time.Millisecond, MaxDelay: 2 * time.Second, MaxTime: 30 * time.Second}
	if got != want {
		t.Errorf("zero policy = %+v, want %+v", got, want)
	}
	// A MaxDelay below BaseDelay would make every delay BaseDelay at most
	// and break the draw; it is raised.
	p := RetryPolicy{BaseDelay: 5 * time.Second, MaxDelay: time.Second}.withDefaults()
	if p.MaxDelay < p.BaseDelay {
		t.Errorf("MaxDelay %v stays below BaseDelay %v", p.MaxDelay, p.BaseDelay)
	}
	set := RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: 3 * time.Millisecond, MaxTime: time.Second}
	if set.withDefaults() != set {
		t.Errorf("set fields changed: %+v", set.withDefaults())
	}
}

func TestRetryOnlyRetryable(t *testing.T) {
	ctx := context.Background()
	notFound, precondition := codedErrors(t)
	canceledCtx, cancel := context.WithCancel(ctx)
	cancel()
	for _, c := range []struct {
		name string
		err  error
	}{
		{"not found", notFound},
		{"precondition failed", precondition},
		{"circuit open", fmt.Errorf("get x: %w", ErrCircuitOpen)},
		{"canceled", context.Canceled},
		{"canceled by the caller", canceledCtx.Err()},
	} {
		calls := 0
		err := fastPolicy(5).do(ctx, quiet(), "op", func(context.Context) error { calls++; return c.err })
		if calls != 1 {
			t.Errorf("%s: %d calls, want 1 (not retryable)", c.name, calls)
		}
		if !errors.Is(err, c.err) {
			t.Errorf("%s: got %v, want the call's own error", c.name, err)
		}
	}
	// A transport failure is retried until it goes away.
	calls := 0
	err := fastPolicy(5).do(ctx, quiet(), "op", func(context.Context) error {
		calls++
		if calls < 3 {
			return errFlaky
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("flaky call: %v after %d calls, want success on the 3rd", err, calls)
	}
	// A retry starts from a clean slate: the call sees its own context.
	type key struct{}
	vctx := context.WithValue(ctx, key{}, "v")
	fastPolicy(2).do(vctx, quiet(), "op", func(c context.Context) error {
		if c.Value(key{}) != "v" {
			t.Errorf("the call did not get the caller's context")
		}
		return nil
	})
}

func TestRetryBoundedAttempts(t *testing.T) {
	for _, attempts := range []int{1, 2, 5} {
		calls := 0
		err := fastPolicy(attempts).do(context.Background(), quiet(), "get k", func(context.Context) error { calls++; return errFlaky })
		if calls != attempts {
			t.Errorf("MaxAttempts %d: %d calls", attempts, calls)
		}
		if !errors.Is(err, errFlaky) || !strings.Contains(err.Error(), fmt.Sprintf("gave up after %d attempts", attempts)) ||
			!strings.Contains(err.Error(), "get k") {
			t.Errorf("MaxAttempts %d: error %v", attempts, err)
		}
	}
}

// TestRetryBoundedTime: MaxTime ends the retries before MaxAttempts does.
// Delays up to an hour against a budget of a second mean the next wait
// would overrun the budget: the policy gives up instead of sleeping. No
// wall clock is asserted; a policy that slept through its budget would be
// caught by the watchdog context, whose error is not "gave up".
func TestRetryBoundedTime(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 1000, BaseDelay: time.Hour, MaxDelay: time.Hour, MaxTime: time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	calls := 0
	err := p.do(ctx, quiet(), "op", func(context.Context) error { calls++; return errFlaky })
	if err == nil || !strings.Contains(err.Error(), "gave up") || !errors.Is(err, errFlaky) {
		t.Fatalf("got %v, want a give-up with the call's error", err)
	}
	if calls >= p.MaxAttempts {
		t.Errorf("%d calls: the time budget did not end the retries", calls)
	}
}

// TestRetryCancelDuringBackoff: a caller that gives up is not kept waiting
// for the backoff to end, and is told why.
func TestRetryCancelDuringBackoff(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 10, BaseDelay: time.Hour, MaxDelay: time.Hour, MaxTime: 100 * time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := p.do(ctx, quiet(), "op", func(context.Context) error {
		calls++
		cancel() // the caller goes away while the call fails
		return errFlaky
	})
	if calls != 1 || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), errFlaky.Error()) {
		t.Errorf("%d calls, %v; want one call and the cancellation with the last error", calls, err)
	}
}

// TestRetryUnderBreaker: retries feed the breaker, and once it opens the
// remaining attempts are refused without calling the store.
func TestRetryUnderBreaker(t *testing.T) {
	clk := clocktest.New(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	b := NewBreaker(BreakerPolicy{Threshold: 3, Cooldown: time.Second, Now: clk.Now})
	calls := 0
	err := fastPolicy(10).do(context.Background(), b, "get k", func(context.Context) error { calls++; return errFlaky })
	if calls != 3 {
		t.Errorf("%d calls reached the store, want 3 (the breaker opens at the 3rd fault)", calls)
	}
	if !errors.Is(err, ErrCircuitOpen) {
		t.Errorf("got %v, want ErrCircuitOpen", err)
	}
	calls = 0
	err = fastPolicy(10).do(context.Background(), b, "get k", func(context.Context) error { calls++; return nil })
	if calls != 0 || !errors.Is(err, ErrCircuitOpen) {
		t.Errorf("open breaker: %d calls, %v; want none and ErrCircuitOpen", calls, err)
	}
	clk.Advance(time.Second)
	err = fastPolicy(10).do(context.Background(), b, "get k", func(context.Context) error { calls++; return nil })
	if calls != 1 || err != nil || b.Health().Degraded {
		t.Errorf("after the cooldown: %d calls, %v, %+v; want the probe through and the breaker closed", calls, err, b.Health())
	}
}

// ---------------------------------------------------------------------------
// Breaker

func TestBreakerDefaults(t *testing.T) {
	b := NewBreaker(BreakerPolicy{})
	if b.p.Threshold != 5 || b.p.Cooldown != time.Second || b.p.MaxCooldown != 30*time.Second || b.p.Now == nil {
		t.Errorf("defaults: %+v", b.p)
	}
	b = NewBreaker(BreakerPolicy{Cooldown: time.Minute, MaxCooldown: time.Second})
	if b.p.MaxCooldown < b.p.Cooldown {
		t.Errorf("MaxCooldown %v below Cooldown %v", b.p.MaxCooldown, b.p.Cooldown)
	}
}

func TestBreaker(t *testing.T) {
	clk := clocktest.New(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	b := NewBreaker(BreakerPolicy{Threshold: 3, Cooldown: time.Second, MaxCooldown: 4 * time.Second, Now: clk.Now})
	fault := func(i int) { b.record(fmt.Errorf("dial tcp 127.0.0.1:1: connect: connection refused (%d)", i)) }
	mustAllow := func(what string) {
		t.Helper()
		if err := b.allow(); err != nil {
			t.Fatalf("%s: refused: %v", what, err)
		}
	}
	mustRefuse := func(what string) {
		t.Helper()
		err := b.allow()
		if !errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("%s: allow = %v, want ErrCircuitOpen", what, err)
		}
		if !b.Health().Degraded {
			t.Fatalf("%s: refusing, yet healthy", what)
		}
	}

	// Below the threshold: closed, healthy (single failures are retried away).
	fault(1)
	fault(2)
	mustAllow("2 faults")
	if h := b.Health(); h.Degraded {
		t.Fatalf("2 faults of 3: %+v", h)
	}
	// A success resets the count.
	b.record(nil)
	fault(3)
	fault(4)
	mustAllow("2 faults after a success")
	// The third in a row opens it.
	fault(5)
	mustRefuse("3 faults in a row")
	h := b.Health()
	if !strings.Contains(h.Reason, "connection refused (5)") || !strings.Contains(h.Reason, "3 failures") {
		t.Errorf("reason %q: want the last failure and the count", h.Reason)
	}
	if err := b.allow(); !strings.Contains(err.Error(), "connection refused (5)") {
		t.Errorf("refusal %q does not say why", err)
	}
	if b.opened != 1 {
		t.Errorf("opened %d times, want 1", b.opened)
	}

	// Open: refused until the cooldown has passed, whatever the count.
	clk.Advance(999 * time.Millisecond)
	mustRefuse("before the cooldown")
	clk.Advance(time.Millisecond)
	mustAllow("the probe after the cooldown")
	mustRefuse("a second call while the probe is out")
	// The probe fails: open again, for twice as long.
	fault(6)
	clk.Advance(1999 * time.Millisecond)
	mustRefuse("before the doubled cooldown")
	clk.Advance(time.Millisecond)
	mustAllow("the probe after 2s")
	fault(7)
	clk.Advance(4 * time.Second)
	mustAllow("the probe after 4s")
	fault(8)
	// Capped at MaxCooldown (4s), not 8s.
	clk.Advance(4 * time.Second)
	mustAllow("the probe after the capped cooldown")
	if b.opened != 1 {
		t.Errorf("failed probes counted as openings: %d", b.opened)
	}
	// The probe succeeds: closed, healthy, and everyone is let through.
	b.record(nil)
	if h := b.Health(); h.Degraded || h.Reason != "" {
		t.Errorf("after a good probe: %+v", h)
	}
	mustAllow("closed again")
	mustAllow("closed again, twice")
	// The cooldown starts over at Cooldown, not at the capped value.
	fault(9)
	fault(10)
	fault(11)
	mustRefuse("reopened")
	if b.opened != 2 {
		t.Errorf("opened %d times, want 2", b.opened)
	}
	clk.Advance(time.Second)
	mustAllow("the probe after 1s: the cooldown was reset")
}

// TestBreakerAnswersAreNotFaults: not found and precondition failed are the
// store answering; they neither open the breaker nor count towards it, and
// a caller's cancellation says nothing about the store.
func TestBreakerAnswersAreNotFaults(t *testing.T) {
	notFound, precondition := codedErrors(t)
	clk := clocktest.New(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	b := NewBreaker(BreakerPolicy{Threshold: 2, Now: clk.Now})
	for range 10 {
		b.record(notFound)
		b.record(fmt.Errorf("read x: %w", notFound))
		b.record(precondition)
		b.record(context.Canceled)
		b.record(fmt.Errorf("get x: %w", ErrCircuitOpen))
	}
	if err := b.allow(); err != nil || b.Health().Degraded {
		t.Fatalf("answers opened the breaker: %v, %+v", err, b.Health())
	}
	// Interleaved with faults they break the run of failures.
	for range 5 {
		b.record(errFlaky)
		b.record(notFound)
	}
	if err := b.allow(); err != nil {
		t.Fatalf("faults separated by answers opened the breaker: %v", err)
	}
	// And a probe answered with not found closes an open breaker: the
	// store is up.
	b.record(errFlaky)
	b.record(errFlaky)
	if b.allow() == nil {
		t.Fatal("2 faults in a row did not open the breaker")
	}
	clk.Advance(time.Second)
	if err := b.allow(); err != nil {
		t.Fatal(err)
	}
	b.record(notFound)
	if b.Health().Degraded || b.allow() != nil {
		t.Errorf("a probe answered by the store left the breaker open: %+v", b.Health())
	}
	for _, c := range []struct {
		err   error
		fault bool
	}{
		{errFlaky, true}, {context.DeadlineExceeded, true}, {notFound, false}, {precondition, false},
		{context.Canceled, false}, {ErrCircuitOpen, false},
	} {
		if isFault(c.err) != c.fault {
			t.Errorf("isFault(%v) = %v", c.err, !c.fault)
		}
	}
}

// TestBreakerConcurrentProbe: of many callers arriving after the cooldown,
// exactly one is let through as the probe.
func TestBreakerConcurrentProbe(t *testing.T) {
	clk := clocktest.New(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	b := NewBreaker(BreakerPolicy{Threshold: 1, Now: clk.Now})
	b.record(errFlaky)
	clk.Advance(time.Hour)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 32 {
		wg.Go(func() {
			if b.allow() == nil {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if allowed != 1 {
		t.Errorf("%d probes let through, want 1", allowed)
	}
}

// ---------------------------------------------------------------------------
// Store on an in-memory bucket (no server): error mapping and the breaker.

func TestStoreNotFoundIsNotAFault(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	s, err := OpenBucket("s3://mem/t", b, Options{CacheDir: t.TempDir(), Breaker: BreakerPolicy{Threshold: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := s.Get(ctx, "_delta_log/00000000000000000000.json"); !errors.Is(err, delta.ErrNotFound) {
			t.Fatalf("Get of a missing key: %v, want delta.ErrNotFound", err)
		}
		if _, err := s.Stat(ctx, "x.parquet"); !errors.Is(err, delta.ErrNotFound) {
			t.Fatalf("Stat of a missing key: %v, want delta.ErrNotFound", err)
		}
		if _, err := s.LocalFile(ctx, "x.parquet"); !errors.Is(err, delta.ErrNotFound) {
			t.Fatalf("LocalFile of a missing key: %v, want delta.ErrNotFound", err)
		}
		if err := s.Delete(ctx, "x.parquet"); err != nil {
			t.Fatalf("Delete of a missing key: %v", err)
		}
		if err := s.PutIfAbsent(ctx, "k", []byte("v")); err != nil && !errors.Is(err, delta.ErrVersionExists) {
			t.Fatal(err)
		}
	}
	if h := s.Health(); h.Degraded {
		t.Errorf("answers from the store opened the breaker (threshold 1): %+v", h)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}

// ---------------------------------------------------------------------------
// Store on versitygw

func openStore(t *testing.T, srv *s3test.Server, path string, tune func(*Options)) *Store {
	t.Helper()
	opts, err := FromProperties(srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	opts.CacheDir = t.TempDir()
	if tune != nil {
		tune(&opts)
	}
	s, err := Open(context.Background(), srv.URL(path), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func listKeys(t *testing.T, s *Store, prefix, after string) []string {
	t.Helper()
	objs, err := s.List(context.Background(), prefix, after)
	if err != nil {
		t.Fatalf("List(%q, %q): %v", prefix, after, err)
	}
	keys := []string{}
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	return keys
}

func TestStoreOnVersitygw(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	s := openStore(t, srv, "db/orders", nil)
	if s.URI() != "s3://"+srv.Bucket+"/db/orders" {
		t.Errorf("URI %q", s.URI())
	}
	raw := srv.OpenBucket(t)

	t.Run("PutGetStat", func(t *testing.T) {
		if _, err := s.Get(ctx, "a/b.json"); !errors.Is(err, delta.ErrNotFound) {
			t.Fatalf("Get before Put: %v", err)
		}
		if err := s.Put(ctx, "a/b.json", []byte(`{"v":1}`)); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, "a/b.json", []byte(`{"v":22}`)); err != nil { // Put replaces
			t.Fatal(err)
		}
		got, err := s.Get(ctx, "a/b.json")
		if err != nil || string(got) != `{"v":22}` {
			t.Fatalf("Get = %q, %v", got, err)
		}
		info, err := s.Stat(ctx, "a/b.json")
		if err != nil || info.Size != 8 || info.Key != "a/b.json" {
			t.Fatalf("Stat = %+v, %v", info, err)
		}
		if _, err := s.Stat(ctx, "a/missing.json"); !errors.Is(err, delta.ErrNotFound) {
			t.Errorf("Stat of a missing key: %v", err)
		}
		// The object lives under the table's prefix, with its content type.
		attrs, err := raw.Attributes(ctx, "db/orders/a/b.json")
		if err != nil || attrs.ContentType != "application/json" {
			t.Errorf("raw object: %+v, %v", attrs, err)
		}
	})

	t.Run("List", func(t *testing.T) {
		ls := openStore(t, srv, "db/list", nil)
		// A sibling table whose name extends ours must not leak in.
		sibling := openStore(t, srv, "db/list2", nil)
		if err := sibling.Put(ctx, "_delta_log/00000000000000000000.json", []byte("{}")); err != nil {
			t.Fatal(err)
		}
		var want []string
		for v := range 5 {
			k := fmt.Sprintf("_delta_log/%020d.json", v)
			want = append(want, k)
			if err := ls.Put(ctx, k, []byte(fmt.Sprint(v))); err != nil {
				t.Fatal(err)
			}
		}
		if err := ls.Put(ctx, "_delta_log/_last_checkpoint", []byte("{}")); err != nil {
			t.Fatal(err)
		}
		if err := ls.Put(ctx, "part-0.parquet", []byte("p")); err != nil {
			t.Fatal(err)
		}
		got := listKeys(t, ls, "_delta_log/0", "")
		if !reflect.DeepEqual(got, want) {
			t.Errorf("List(_delta_log/0) = %v, want %v", got, want)
		}
		got = listKeys(t, ls, "_delta_log/0", want[2])
		if !reflect.DeepEqual(got, want[3:]) {
			t.Errorf("List after %s = %v, want %v", want[2], got, want[3:])
		}
		// startAfter need not be a key that exists.
		got = listKeys(t, ls, "_delta_log/", "_delta_log/00000000000000000003")
		if !reflect.DeepEqual(got, []string{want[3], want[4], "_delta_log/_last_checkpoint"}) {
			t.Errorf("List after a non-key = %v", got)
		}
		if got := listKeys(t, ls, "_delta_log/", "_delta_log/~"); len(got) != 0 {
			t.Errorf("List after the last key = %v", got)
		}
		all := listKeys(t, ls, "", "")
		if len(all) != 7 || all[len(all)-1] != "part-0.parquet" {
			t.Errorf("List of the whole table = %v", all)
		}
		objs, err := ls.List(ctx, "_delta_log/", "")
		if err != nil || objs[0].Size != 1 {
			t.Errorf("sizes: %+v, %v", objs, err)
		}
		if got := listKeys(t, ls, "nothing/", ""); len(got) != 0 {
			t.Errorf("List of an empty prefix = %v", got)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		if err := s.Put(ctx, "del/x.parquet", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "del/x.parquet"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "del/x.parquet"); !errors.Is(err, delta.ErrNotFound) {
			t.Errorf("Get after Delete: %v", err)
		}
		if err := s.Delete(ctx, "del/x.parquet"); err != nil {
			t.Errorf("Delete of a missing key: %v", err)
		}
	})

	t.Run("PutIfAbsent", func(t *testing.T) {
		k := "_delta_log/00000000000000000007.json"
		if err := s.PutIfAbsent(ctx, k, []byte("first")); err != nil {
			t.Fatal(err)
		}
		err := s.PutIfAbsent(ctx, k, []byte("second"))
		if !errors.Is(err, delta.ErrVersionExists) {
			t.Fatalf("second PutIfAbsent: %v, want delta.ErrVersionExists", err)
		}
		if got, err := s.Get(ctx, k); err != nil || string(got) != "first" {
			t.Errorf("entry after a lost PutIfAbsent: %q, %v", got, err)
		}
		// Racing writers: exactly one wins.
		k = "_delta_log/00000000000000000008.json"
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() { errs[i] = s.PutIfAbsent(ctx, k, []byte(fmt.Sprint("writer ", i))) })
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, delta.ErrVersionExists):
				t.Errorf("racing PutIfAbsent: %v", err)
			}
		}
		if won != 1 {
			t.Errorf("%d winners of a PutIfAbsent race", won)
		}
		if s.Health().Degraded {
			t.Errorf("lost races opened the breaker: %+v", s.Health())
		}
	})

	t.Run("PutFileAndLocalFile", func(t *testing.T) {
		key := "region=eu/part-00000-abc.parquet"
		staged := filepath.Join(s.StagingDir(), filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(staged), 0o755); err != nil {
			t.Fatal(err)
		}
		data := bytes.Repeat([]byte("PAR1 lakesql "), 10000)
		if err := os.WriteFile(staged, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := s.PutFile(ctx, key, staged); err != nil {
			t.Fatal(err)
		}
		got, err := raw.ReadAll(ctx, "db/orders/"+key)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("uploaded object: %d bytes, %v; want %d", len(got), err, len(data))
		}
		if attrs, err := raw.Attributes(ctx, "db/orders/"+key); err != nil || attrs.ContentType != "application/vnd.apache.parquet" {
			t.Errorf("content type: %+v, %v", attrs, err)
		}
		if _, err := os.Stat(staged); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("staged file still there after PutFile: %v", err)
		}
		// The upload was moved into the read cache: LocalFile serves it
		// without the store. Remove the object behind the store's back to
		// prove no download happens.
		if err := raw.Delete(ctx, "db/orders/"+key); err != nil {
			t.Fatal(err)
		}
		p, err := s.LocalFile(ctx, key)
		if err != nil {
			t.Fatalf("LocalFile of an uploaded file: %v", err)
		}
		if local, err := os.ReadFile(p); err != nil || !bytes.Equal(local, data) {
			t.Errorf("cached copy: %d bytes, %v", len(local), err)
		}

		// A file put by someone else is downloaded once, then cached.
		other := "region=us/part-00001-def.parquet"
		if err := raw.WriteAll(ctx, "db/orders/"+other, []byte("v1"), nil); err != nil {
			t.Fatal(err)
		}
		p1, err := s.LocalFile(ctx, other)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p1); string(got) != "v1" {
			t.Errorf("downloaded %q", got)
		}
		if err := raw.WriteAll(ctx, "db/orders/"+other, []byte("v2 changed"), nil); err != nil {
			t.Fatal(err)
		}
		p2, err := s.LocalFile(ctx, other)
		if err != nil || p2 != p1 {
			t.Fatalf("second LocalFile: %q, %v (first %q)", p2, err, p1)
		}
		if got, _ := os.ReadFile(p2); string(got) != "v1" {
			t.Errorf("second LocalFile downloaded again: %q", got)
		}
		// A failed download leaves no temp file in the cache.
		if _, err := s.LocalFile(ctx, "region=us/missing.parquet"); !errors.Is(err, delta.ErrNotFound) {
			t.Errorf("LocalFile of a missing object: %v", err)
		}
		filepath.WalkDir(filepath.Dir(p1), func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasPrefix(d.Name(), ".download-") {
				t.Errorf("temp file left in the cache: %s", p)
			}
			return nil
		})
		// Keys that would leave the cache are hashed into it.
		if cp := s.cachePath("../../etc/passwd"); !strings.HasPrefix(cp, filepath.Join(s.cache, "files")+string(filepath.Separator)) {
			t.Errorf("cachePath escapes the cache: %s", cp)
		}
	})

	if h := s.Health(); h.Degraded {
		t.Errorf("healthy server, degraded store: %+v", h)
	}
}

// TestStoreOutage: versitygw is killed. Calls fail (PutIfAbsent after a
// single try), the breaker opens after Threshold faults and then refuses
// calls without trying, the store reports itself degraded; the server
// comes back on the same port, and after the cooldown (an injected clock)
// the probe closes the breaker and the data written before is still there.
func TestStoreOutage(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	clk := clocktest.New(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	s := openStore(t, srv, "outage/t", func(o *Options) {
		o.Retry = RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond, MaxTime: 10 * time.Second}
		o.Breaker = BreakerPolicy{Threshold: 4, Cooldown: time.Second, Now: clk.Now}
	})
	if err := s.PutIfAbsent(ctx, "_delta_log/00000000000000000000.json", []byte("v0")); err != nil {
		t.Fatal(err)
	}
	srv.Kill()

	// A Get (2 tries), a PutIfAbsent (1 try, never retried) and a List
	// (its 1st try is the 4th fault; its 2nd is refused): the threshold.
	if _, err := s.Get(ctx, "_delta_log/00000000000000000000.json"); err == nil || errors.Is(err, delta.ErrNotFound) {
		t.Fatalf("Get from a dead server: %v", err)
	}
	if s.Health().Degraded {
		t.Fatalf("degraded after 2 faults of 4: %+v", s.Health())
	}
	if s.breaker.fails != 2 {
		t.Fatalf("a Get with 2 attempts recorded %d faults", s.breaker.fails)
	}
	if err := s.PutIfAbsent(ctx, "_delta_log/00000000000000000001.json", []byte("v1")); err == nil || errors.Is(err, delta.ErrVersionExists) {
		t.Fatalf("PutIfAbsent to a dead server: %v", err)
	}
	if s.breaker.fails != 3 {
		t.Fatalf("after a failed PutIfAbsent: %d faults, want 3 (tried once)", s.breaker.fails)
	}
	if _, err := s.List(ctx, "_delta_log/", ""); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("List on a dead server: %v, want its retry refused by the breaker", err)
	}
	h := s.Health()
	if !h.Degraded || !strings.Contains(h.Reason, "storage unreachable") {
		t.Fatalf("after 4 faults: %+v, want degraded", h)
	}
	// Open: refused at once, without a fault of its own.
	for _, call := range []func() error{
		func() error { _, err := s.Get(ctx, "_delta_log/00000000000000000000.json"); return err },
		func() error { return s.PutIfAbsent(ctx, "_delta_log/00000000000000000001.json", []byte("v1")) },
		func() error { return s.Put(ctx, "x", []byte("x")) },
		func() error { return s.Delete(ctx, "x") },
		func() error { _, err := s.Stat(ctx, "x"); return err },
		func() error { _, err := s.LocalFile(ctx, "x.parquet"); return err },
	} {
		if err := call(); !errors.Is(err, ErrCircuitOpen) {
			t.Errorf("call through an open breaker: %v, want ErrCircuitOpen", err)
		}
	}

	srv.Restart(t)
	// Still open: the cooldown has not passed on the breaker's clock, so
	// the store is not tried even though it is back.
	if _, err := s.Get(ctx, "_delta_log/00000000000000000000.json"); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("before the cooldown: %v, want ErrCircuitOpen", err)
	}
	clk.Advance(time.Second)
	got, err := s.Get(ctx, "_delta_log/00000000000000000000.json")
	if err != nil || string(got) != "v0" {
		t.Fatalf("after the restart: %q, %v", got, err)
	}
	if h := s.Health(); h.Degraded {
		t.Errorf("a good probe left the store degraded: %+v", h)
	}
	// The put refused while down never landed.
	if _, err := s.Get(ctx, "_delta_log/00000000000000000001.json"); !errors.Is(err, delta.ErrNotFound) {
		t.Errorf("version 1 after the outage: %v, want not found", err)
	}
	if err := s.PutIfAbsent(ctx, "_delta_log/00000000000000000001.json", []byte("v1")); err != nil {
		t.Errorf("PutIfAbsent after the outage: %v", err)
	}
}

// TestStoreCacheLimit: the copies a store keeps of its data files stay
// within storage.cache_max_bytes, the least recently used going first;
// an evicted file is downloaded again when read.
func TestStoreCacheLimit(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	s := openStore(t, srv, "db/limited", func(o *Options) { o.CacheMaxBytes = 10_000 })
	// Every copy counts as used an hour ago: none is spared as recent.
	s.limit.Now = func() time.Time { return time.Now().Add(time.Hour) }
	cacheBytes := func() (n int64) {
		filepath.WalkDir(filepath.Join(s.cache, "files"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				info, _ := d.Info()
				n += info.Size()
			}
			return nil
		})
		return n
	}
	data := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, 4000) }
	key := func(i int) string { return fmt.Sprintf("part-%d.parquet", i) }
	for i := range 5 {
		staged := filepath.Join(s.StagingDir(), key(i))
		if err := os.MkdirAll(filepath.Dir(staged), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(staged, data(i), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := s.PutFile(ctx, key(i), staged); err != nil {
			t.Fatal(err)
		}
		// Distinct use times, oldest first.
		old := time.Now().Add(time.Duration(i-10) * time.Minute)
		os.Chtimes(s.cachePath(key(i)), old, old)
	}
	if n := cacheBytes(); n > 10_000 || n == 0 {
		t.Errorf("cache holds %d bytes after 20,000 uploaded, want at most 10,000", n)
	}
	if _, err := os.Stat(s.cachePath(key(0))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the oldest copy is still cached: %v", err)
	}
	if _, err := os.Stat(s.cachePath(key(4))); err != nil {
		t.Errorf("the newest copy was evicted: %v", err)
	}
	for i := range 5 {
		p, err := s.LocalFile(ctx, key(i))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, data(i)) {
			t.Errorf("%s read back: %d bytes, %v", key(i), len(got), err)
		}
	}
}
