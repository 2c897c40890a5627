package wire

import (
	"fmt"
	"os"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
)

// The connection settings are MySQL's system variables max_connections,
// connect_timeout and max_connect_errors: New sets them from Config, SET
// GLOBAL changes them, and admitListener reads them at each accept.
// open_files_limit reports the process's open-file limit.

// connectionDefaults fills in Config's connection defaults and checks
// the ranges the system variables hold.
func (cfg *Config) connectionDefaults() error {
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	if cfg.MaxConnections == 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	if cfg.MaxConnections > maxMaxConnections {
		return fmt.Errorf("lakesql: --max-connections %d: at most %d", cfg.MaxConnections, maxMaxConnections)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.ConnectTimeout%time.Second != 0 || cfg.ConnectTimeout < 2*time.Second || cfg.ConnectTimeout > 31536000*time.Second {
		return fmt.Errorf("lakesql: --connect-timeout %v: a whole number of seconds from 2s to 31536000s", cfg.ConnectTimeout)
	}
	if cfg.MaxConnectErrors == 0 {
		cfg.MaxConnectErrors = DefaultMaxConnectErrors
	}
	return nil
}

// assignConnectionSettings sets the system variables from cfg.
func assignConnectionSettings(cfg Config) error {
	vals := map[string]any{
		"max_connections":    int64(cfg.MaxConnections),
		"connect_timeout":    int64(cfg.ConnectTimeout / time.Second),
		"max_connect_errors": cfg.MaxConnectErrors,
	}
	if n, ok := openFileLimit(); ok {
		vals["open_files_limit"] = n
	}
	err := gms.SystemVariables.AssignValues(vals)
	if err != nil {
		return fmt.Errorf("lakesql: connection settings: %w", err)
	}
	return nil
}

// admitSettings reads the connection settings from the system variables;
// one that cannot be read keeps its default.
func admitSettings() admitLimits {
	return admitLimits{
		maxConnections:   globalUint("max_connections", DefaultMaxConnections),
		connectTimeout:   time.Duration(globalUint("connect_timeout", uint64(DefaultConnectTimeout/time.Second))) * time.Second,
		maxConnectErrors: globalUint("max_connect_errors", DefaultMaxConnectErrors),
	}
}

func globalUint(name string, def uint64) uint64 {
	_, v, ok := gms.SystemVariables.GetGlobal(name)
	if !ok {
		return def
	}
	switch x := v.(type) {
	case int64:
		if x > 0 {
			return uint64(x)
		}
	case uint64:
		if x > 0 {
			return x
		}
	case int:
		if x > 0 {
			return uint64(x)
		}
	case int32:
		if x > 0 {
			return uint64(x)
		}
	case uint32:
		if x > 0 {
			return uint64(x)
		}
	}
	return def
}
