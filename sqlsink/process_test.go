package sqlsink

import (
	"bytes"
	"strings"
	"sync"
)

// syncBuffer collects a child process's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// lastLine returns the last line of out that starts with tag.
func lastLine(out, tag string) string {
	var last string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, tag) {
			last = l
		}
	}
	return last
}
