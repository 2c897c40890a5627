// Package s3test runs a real S3-compatible server, versitygw, for tests
// that must see S3's own semantics: conditional writes (If-None-Match: *
// answered with 412, one winner per race), path-style addressing, SigV4
// auth, and an endpoint that can die and come back. A fake would test our
// idea of S3 rather than S3.
//
// A test starts its own server with Start, or a package shares one through
// TestMain with RunMain. The binary comes from Binary (bin/versitygw, built
// by `make bin/versitygw`).
package s3test

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Fixed credentials and region: the server is private to the test, so the
// values only have to agree between server and client.
const (
	AccessKey     = "lakesqltest"
	SecretKey     = "lakesqltestsecret"
	Region        = "us-east-1"
	DefaultBucket = "lake"
)

// Metadata modes of versitygw's posix backend: object metadata (ETag,
// content type, user metadata) in user xattrs when the file system has
// them, else in sidecar files.
const (
	MetaXattr   = "xattr"
	MetaSidecar = "sidecar"
)

// Server is one versitygw process serving a posix directory, with a bucket
// created in it.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	Bucket    string
	AccessKey string
	SecretKey string
	Region    string
	// Dir holds the server's state: data/ (the posix root; bucket B's
	// objects are files under data/B), meta/ (sidecar metadata, if used)
	// and versitygw.log. Everything in it survives Kill and Restart.
	Dir      string
	DataDir  string
	LogFile  string
	Metadata string // MetaXattr or MetaSidecar

	bin  string
	port int

	mu   sync.Mutex
	proc *proc // nil while killed
}

// Option changes how Start sets a server up.
type Option func(*config)

type config struct {
	bucket  string
	dir     string
	sidecar bool
}

// WithBucket names the bucket Start creates (default "lake").
func WithBucket(name string) Option { return func(c *config) { c.bucket = name } }

// WithDir puts the server's state in dir instead of a fresh temporary
// directory; a later Start on the same dir sees the same objects.
func WithDir(dir string) Option { return func(c *config) { c.dir = dir } }

// WithSidecar makes the server keep metadata in sidecar files even where
// xattrs work, to test the path that machines without user xattrs take.
func WithSidecar() Option { return func(c *config) { c.sidecar = true } }

// Start runs versitygw on a free port of 127.0.0.1, waits until it answers,
// creates the bucket, and kills the server when the test ends. It fails the
// test if any of that fails, with the tail of the server's log.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	c := config{bucket: DefaultBucket}
	for _, o := range opts {
		o(&c)
	}
	if c.dir == "" {
		c.dir = tb.TempDir()
	}
	s, err := start(c)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Kill)
	return s
}

// URL returns the s3:// URL of path in the server's bucket, the form
// lakesql's sinks take as a location.
func (s *Server) URL(path string) string {
	u := url.URL{Scheme: "s3", Host: s.Bucket, Path: "/" + strings.TrimPrefix(path, "/")}
	return u.String()
}

// Env returns the AWS credential variables a child process (lakesql
// itself, a CLI) needs to talk to the server; append it to os.Environ().
// The endpoint is not among them: it goes in Options.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=" + s.Region,
	}
}

// Options returns lakesql's sink storage options that point at the server.
// Path style is required: the bucket is not a DNS name under 127.0.0.1.
func (s *Server) Options() map[string]string {
	return map[string]string{
		"storage.endpoint":          s.Endpoint,
		"storage.region":            s.Region,
		"storage.path_style":        "true",
		"storage.access_key_id":     s.AccessKey,
		"storage.secret_access_key": s.SecretKey,
	}
}

// PID returns the process id of the running server, or 0 after Kill.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

// Kill sends SIGKILL to the server, as a crash would, and waits for it to
// exit. Requests in flight are cut off; what reached the disk stays. It
// does nothing if the server is not running.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		s.proc.kill()
		s.proc = nil
	}
}

// Restart starts the server again on the same directory and port, killing
// it first if it is still running, and waits until it answers. Clients
// keep working across a restart because the endpoint does not change. If
// another process took the port while the server was down (unlikely, as
// ports are handed out in rotation), the start fails and says so.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.Kill()
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.launch()
	if err != nil {
		tb.Fatalf("restart versitygw: %v", err)
	}
	s.proc = p
}

func start(c config) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	dir, err := filepath.Abs(c.dir)
	if err != nil {
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	s := &Server{
		Bucket:    c.bucket,
		AccessKey: AccessKey,
		SecretKey: SecretKey,
		Region:    Region,
		Dir:       dir,
		DataDir:   filepath.Join(dir, "data"),
		LogFile:   filepath.Join(dir, "versitygw.log"),
		bin:       bin,
	}
	if err := s.prepareDirs(c.sidecar); err != nil {
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	if err := s.launchOnFreePort(); err != nil {
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	if err := s.createBucket(); err != nil {
		s.Kill()
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	return s, nil
}
