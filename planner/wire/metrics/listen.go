package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lakesql/lakesql/planner/wire"
)

// Endpoint serves /metrics over HTTP.
type Endpoint struct {
	ln  net.Listener
	srv *http.Server
}

// Listen starts listening on addr (host:port) for scrapes of srv's
// figures, with the Go runtime's and the process's; Serve answers them.
func Listen(addr string, srv *wire.Server) (*Endpoint, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("--metrics-listen %q: want host:port: %w", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-listen %q: %w", addr, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(srv), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return &Endpoint{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}, nil
}

// Addr is the address the endpoint listens on.
func (e *Endpoint) Addr() net.Addr { return e.ln.Addr() }

// Serve answers scrapes until Shutdown.
func (e *Endpoint) Serve() error {
	if err := e.srv.Serve(e.ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics endpoint: %w", err)
	}
	return nil
}

// Shutdown stops the endpoint, letting scrapes in flight finish until ctx ends.
func (e *Endpoint) Shutdown(ctx context.Context) error { return e.srv.Shutdown(ctx) }
