package s3test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// readyTimeout bounds how long a start may take before it counts as
// failed; versitygw normally answers within tens of milliseconds.
const readyTimeout = 30 * time.Second

// errAddrInUse marks a start that lost its port to another process between
// choosing it and binding it, which is worth retrying on another port.
var errAddrInUse = errors.New("port already in use")

// proc is one run of the versitygw process.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited and been reaped
}

func (p *proc) kill() {
	_ = p.cmd.Process.Kill() // SIGKILL on unix
	<-p.done
}

// prepareDirs makes the data directory and settles where metadata goes.
// xattrs are versitygw's main path, so they are used where they work; a
// directory that was once started with sidecar metadata keeps it, because
// switching would lose every object's ETag and content type.
func (s *Server) prepareDirs(forceSidecar bool) error {
	if err := os.MkdirAll(s.DataDir, 0o755); err != nil {
		return err
	}
	metaDir := filepath.Join(s.Dir, "meta")
	_, err := os.Stat(metaDir)
	hadSidecar := err == nil
	if forceSidecar || hadSidecar || !xattrsWork(s.DataDir) {
		s.Metadata = MetaSidecar
		return os.MkdirAll(metaDir, 0o755)
	}
	s.Metadata = MetaXattr
	return nil
}

// args builds versitygw's command line. Global flags go before the posix
// subcommand, the backend's after it:
//
//	--port 127.0.0.1:PORT  loopback only; the default is every interface on 7070
//	--access/--secret      the root account, the only one (no IAM configured)
//	--region               what SigV4 signatures must be scoped to
//	--keep-alive           keep HTTP connections open, as S3 does; without
//	                       it every request pays a new connection
//	posix [--sidecar DIR] DATADIR
//	                       files as objects; --sidecar keeps metadata in
//	                       files where user xattrs are missing (the default
//	                       refuses to start there: "xattr check failed")
func (s *Server) args() []string {
	a := []string{
		"--port", "127.0.0.1:" + strconv.Itoa(s.port),
		"--access", s.AccessKey,
		"--secret", s.SecretKey,
		"--region", s.Region,
		"--keep-alive",
		"posix",
	}
	if s.Metadata == MetaSidecar {
		a = append(a, "--sidecar", filepath.Join(s.Dir, "meta"))
	}
	return append(a, s.DataDir)
}

// launchOnFreePort picks a free loopback port and starts the server on it,
// trying again on another port if someone else took the first meanwhile.
func (s *Server) launchOnFreePort() error {
	var err error
	for range 5 {
		s.port, err = freePort()
		if err != nil {
			return err
		}
		s.Endpoint = "http://127.0.0.1:" + strconv.Itoa(s.port)
		var p *proc
		p, err = s.launch()
		if err == nil {
			s.mu.Lock()
			s.proc = p
			s.mu.Unlock()
			return nil
		}
		if !errors.Is(err, errAddrInUse) {
			return err
		}
	}
	return err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// launch starts the process and waits until it answers HTTP. Its output
// is appended to LogFile, so the log tells the story of every restart.
func (s *Server) launch() (*proc, error) {
	log, err := os.OpenFile(s.LogFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	defer log.Close() // the child holds its own descriptor
	start, err := log.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	args := s.args()
	fmt.Fprintf(log, "=== s3test %s: %s %s\n", time.Now().Format(time.RFC3339Nano), s.bin, strings.Join(args, " "))

	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.Dir
	cmd.Env = childEnv()
	cmd.Stdout = log
	cmd.Stderr = log
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", s.bin, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	if err := s.waitReady(p); err != nil {
		p.kill()
		tail := logTail(s.LogFile, start)
		if strings.Contains(tail, "address already in use") {
			err = fmt.Errorf("%w: %w", errAddrInUse, err)
		}
		return nil, fmt.Errorf("%w; log %s ends:\n%s", err, s.LogFile, tail)
	}
	return p, nil
}

// waitReady polls the endpoint until any HTTP answer comes back (an
// unsigned request gets 403, which is as good as 200 here).
func (s *Server) waitReady(p *proc) error {
	client := &http.Client{
		Timeout: time.Second,
		// No Proxy: a proxy from the environment must not answer for us.
		Transport: &http.Transport{DisableKeepAlives: true},
	}
	deadline := time.Now().Add(readyTimeout)
	for {
		select {
		case <-p.done:
			return fmt.Errorf("versitygw exited before answering: %v", p.cmd.ProcessState)
		default:
		}
		resp, err := client.Get(s.Endpoint + "/")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("versitygw did not answer on %s within %v: %w", s.Endpoint, readyTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// childEnv is the test's environment without versitygw's own settings
// (VGW_*, ROOT_*), which would otherwise quietly reconfigure the server
// from a developer's shell.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "VGW_") || strings.HasPrefix(kv, "ROOT_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// logTail returns the last lines the log got since offset from.
func logTail(path string, from int64) string {
	const max = 4 << 10
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	if from > int64(len(b)) {
		from = 0 // truncated under us; show what there is
	}
	b = b[from:]
	if len(b) > max {
		b = b[len(b)-max:]
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}
