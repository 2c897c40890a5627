package s3test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// shared is the server RunMain starts for the tests that do not kill it.
var shared *Server

func TestMain(m *testing.M) { os.Exit(RunMain(m, &shared)) }

// prefix gives each run of a test its own keys on the shared server, which
// outlives the runs of -count=N.
func prefix(t *testing.T) string {
	return fmt.Sprintf("%s/%d", t.Name(), time.Now().UnixNano())
}

func TestSharedServer(t *testing.T) {
	s := shared
	if s.PID() == 0 || !strings.HasPrefix(s.Endpoint, "http://127.0.0.1:") {
		t.Fatalf("PID %d, Endpoint %q: not a running loopback server", s.PID(), s.Endpoint)
	}
	t.Logf("versitygw pid %d at %s, metadata in %s", s.PID(), s.Endpoint, s.Metadata)
	if got, want := s.URL("t/a.parquet"), "s3://lake/t/a.parquet"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	opts := s.Options()
	if opts["storage.endpoint"] != s.Endpoint || opts["storage.path_style"] != "true" ||
		opts["storage.access_key_id"] != AccessKey || opts["storage.secret_access_key"] != SecretKey ||
		opts["storage.region"] != Region {
		t.Errorf("Options = %v", opts)
	}
	env := strings.Join(s.Env(), " ")
	for _, want := range []string{"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey, "AWS_REGION=" + Region} {
		if !strings.Contains(env, want) {
			t.Errorf("Env lacks %s: %v", want, s.Env())
		}
	}
}

func TestPutGet(t *testing.T) {
	ctx := context.Background()
	b := shared.OpenBucket(t)
	key := prefix(t) + "/dir/obj.txt"
	data := []byte("hello, lake")
	if err := b.WriteAll(ctx, key, data, &blob.WriterOptions{ContentType: "text/plain"}); err != nil {
		t.Fatalf("write: %v", err)
	}
	got, err := b.ReadAll(ctx, key)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read = %q, %v; want %q", got, err, data)
	}
	// Metadata goes through xattrs or sidecar files: check it survives.
	attrs, err := b.Attributes(ctx, key)
	if err != nil {
		t.Fatalf("attributes: %v", err)
	}
	if attrs.ContentType != "text/plain" || attrs.Size != int64(len(data)) || attrs.ETag == "" {
		t.Errorf("attributes: content type %q, size %d, etag %q", attrs.ContentType, attrs.Size, attrs.ETag)
	}
	// The posix backend stores the object as a plain file under DataDir.
	onDisk, err := os.ReadFile(filepath.Join(shared.DataDir, shared.Bucket, key))
	if err != nil || !bytes.Equal(onDisk, data) {
		t.Errorf("file under DataDir = %q, %v", onDisk, err)
	}
	_, err = b.ReadAll(ctx, prefix(t)+"/missing")
	if gcerrors.Code(err) != gcerrors.NotFound {
		t.Errorf("read of a missing key: code %v (%v), want NotFound", gcerrors.Code(err), err)
	}
}

// TestIfNotExistRace is the property lakesql's commits rest on: of many
// writers creating the same key with If-None-Match: *, exactly one wins,
// the others get 412, which gocloud reports as FailedPrecondition. Several
// rounds, with bodies big enough that writers overlap on the server.
func TestIfNotExistRace(t *testing.T) {
	t.Run(MetaXattr+"OrDefault", func(t *testing.T) { raceRounds(t, shared) })
	t.Run(MetaSidecar, func(t *testing.T) {
		s := Start(t, WithSidecar())
		if s.Metadata != MetaSidecar {
			t.Fatalf("Metadata = %q", s.Metadata)
		}
		raceRounds(t, s)
	})
}

func raceRounds(t *testing.T, s *Server) {
	const writers, rounds = 16, 10
	ctx := context.Background()
	b := s.OpenBucket(t)
	p := prefix(t)
	for round := range rounds {
		key := fmt.Sprintf("%s/round-%d/_delta_log/00000000000000000001.json", p, round)
		bodies := make([][]byte, writers)
		errs := make([]error, writers)
		for i := range bodies {
			bodies[i] = bytes.Repeat([]byte(fmt.Sprintf("writer %02d;", i)), 64<<10/10)
		}
		var wg sync.WaitGroup
		startGun := make(chan struct{})
		for i := range writers {
			wg.Go(func() {
				<-startGun
				errs[i] = b.WriteAll(ctx, key, bodies[i], &blob.WriterOptions{IfNotExist: true})
			})
		}
		close(startGun)
		wg.Wait()

		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Errorf("round %d: writers %d and %d both succeeded", round, winner, i)
			case err == nil:
				winner = i
			case gcerrors.Code(err) != gcerrors.FailedPrecondition:
				t.Errorf("round %d: writer %d: code %v, want FailedPrecondition: %v", round, i, gcerrors.Code(err), err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer succeeded: %v", round, errs)
		}
		got, err := b.ReadAll(ctx, key)
		if err != nil || !bytes.Equal(got, bodies[winner]) {
			t.Fatalf("round %d: object is not the winner's (%d) body: %d bytes, %v", round, winner, len(got), err)
		}
		if round == 0 {
			t.Logf("a loser's error: %v", errs[(winner+1)%writers])
		}
	}
}

func TestKillRestart(t *testing.T) {
	s := Start(t, WithBucket("crash"))
	ctx := context.Background()
	b := s.OpenBucket(t)
	if err := b.WriteAll(ctx, "before", []byte("kept"), nil); err != nil {
		t.Fatalf("write before kill: %v", err)
	}
	pid, endpoint := s.PID(), s.Endpoint

	s.Kill()
	if s.PID() != 0 {
		t.Fatalf("PID after Kill = %d", s.PID())
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	t0 := time.Now()
	err := b.WriteAll(cctx, "while-dead", []byte("x"), nil)
	if err == nil {
		t.Fatal("write to a killed server succeeded")
	}
	t.Logf("write while dead failed after %v: %v", time.Since(t0).Round(time.Millisecond), err)

	t0 = time.Now()
	s.Restart(t)
	t.Logf("restart took %v", time.Since(t0).Round(time.Millisecond))
	if s.PID() == 0 || s.PID() == pid || s.Endpoint != endpoint {
		t.Fatalf("after Restart: PID %d (was %d), Endpoint %s (was %s)", s.PID(), pid, s.Endpoint, endpoint)
	}
	got, err := b.ReadAll(ctx, "before")
	if err != nil || string(got) != "kept" {
		t.Fatalf("object after restart = %q, %v", got, err)
	}
	if err := b.WriteAll(ctx, "after", []byte("works"), &blob.WriterOptions{IfNotExist: true}); err != nil {
		t.Fatalf("write after restart: %v", err)
	}
	if ok, err := b.Exists(ctx, "while-dead"); err != nil || ok {
		t.Errorf("the failed write left an object: exists=%v, %v", ok, err)
	}
}

// TestStartOnSameDir checks that a second Start on a dir keeps its objects
// and bucket (CreateBucket of an owned bucket is not an error).
func TestStartOnSameDir(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Now()
	s1 := Start(t, WithDir(dir))
	t.Logf("start with bucket creation took %v", time.Since(t0).Round(time.Millisecond))
	ctx := context.Background()
	if err := s1.OpenBucket(t).WriteAll(ctx, "k", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	s1.Kill()
	s2 := Start(t, WithDir(dir))
	if s2.Metadata != s1.Metadata {
		t.Errorf("metadata mode changed: %s then %s", s1.Metadata, s2.Metadata)
	}
	got, err := s2.OpenBucket(t).ReadAll(ctx, "k")
	if err != nil || string(got) != "v" {
		t.Fatalf("read on second start = %q, %v", got, err)
	}
}

// TestStartFailureShowsLog runs a stand-in binary that dies at once: the
// error must carry what it printed, which is how a real start failure
// (bad flag, xattr check) gets diagnosed.
func TestStartFailureShowsLog(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "versitygw")
	script := "#!/bin/sh\necho 'fake versitygw: xattr check failed' >&2\nexit 3\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinaryEnv, fake)
	_, err := start(config{bucket: DefaultBucket, dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "xattr check failed") || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("start error = %v; want it to say the server exited and quote its log", err)
	}
}

func TestBinaryMissing(t *testing.T) {
	t.Setenv(BinaryEnv, filepath.Join(t.TempDir(), "nope"))
	if _, err := Binary(); err == nil || !strings.Contains(err.Error(), BinaryEnv) {
		t.Errorf("Binary with a bad $%s: %v", BinaryEnv, err)
	}

	t.Setenv(BinaryEnv, "")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	_, err := Binary()
	if err == nil || !strings.Contains(err.Error(), "make bin/versitygw") || !strings.Contains(err.Error(), filepath.Join(root, "bin", "versitygw")) {
		t.Errorf("Binary without bin/versitygw: %v", err)
	}
}
